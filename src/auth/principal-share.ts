/**
 * How many locked writes each principal has in this proxy right now (waiting for their locks or
 * holding them), so that one client cannot fill every document's queue: past its share a write
 * is refused before it takes anything shared.
 */
export class PrincipalShare {
  private readonly inFlight = new Map<string, number>();

  /** Counts a write of `name` in, unless it already has `max` (0: unbounded); returns its release, or null when refused. */
  enter(name: string, max: number): (() => void) | null {
    const count = this.inFlight.get(name) ?? 0;
    if (max > 0 && count >= max) return null;
    this.inFlight.set(name, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(name) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(name);
      else this.inFlight.set(name, left);
    };
  }

  count(name: string): number {
    return this.inFlight.get(name) ?? 0;
  }
}
