import type { StandInRequest } from './stand-in-request.js';

/**
 * Holds matching requests before the stand-in handles them until the test releases the gate.
 * Held writes count as in flight for the overlap detector.
 */
export interface Gate {
  /** Requests that reached the gate so far. */
  readonly arrivals: number;
  /** Resolves once `count` requests have reached the gate. */
  arrived(count?: number): Promise<void>;
  /** Lets every held and future matching request through. */
  release(): void;
  /** Removes the gate (releasing what it holds). */
  remove(): void;
}

export class GateSet {
  private readonly gates = new Set<GateImpl>();

  add(match: (request: StandInRequest) => boolean): Gate {
    const gate = new GateImpl(match, () => this.gates.delete(gate));
    this.gates.add(gate);
    return gate;
  }

  /** Waits at every gate matching `request`. */
  async pass(request: StandInRequest): Promise<void> {
    const matching = [...this.gates].filter((gate) => gate.matches(request));
    await Promise.all(matching.map((gate) => gate.hold()));
  }

  releaseAll(): void {
    for (const gate of this.gates) gate.remove();
  }
}

class GateImpl implements Gate {
  arrivals = 0;
  private open = false;
  private readonly held: (() => void)[] = [];
  private readonly arrivalWaiters: { count: number; wake: () => void }[] = [];

  constructor(
    private readonly match: (request: StandInRequest) => boolean,
    private readonly detach: () => void,
  ) {}

  matches(request: StandInRequest): boolean {
    return this.match(request);
  }

  hold(): Promise<void> {
    this.arrivals += 1;
    for (const waiter of this.arrivalWaiters.filter((w) => w.count <= this.arrivals)) {
      this.arrivalWaiters.splice(this.arrivalWaiters.indexOf(waiter), 1);
      waiter.wake();
    }
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => this.held.push(resolve));
  }

  arrived(count = 1): Promise<void> {
    if (this.arrivals >= count) return Promise.resolve();
    return new Promise((wake) => this.arrivalWaiters.push({ count, wake }));
  }

  release(): void {
    this.open = true;
    for (const resume of this.held.splice(0)) resume();
  }

  remove(): void {
    this.release();
    this.detach();
  }
}
