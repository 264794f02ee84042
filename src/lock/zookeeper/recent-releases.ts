import { LRUCache } from 'lru-cache';

/**
 * Documents whose lock this process gave back a moment ago. A document that comes back within
 * the linger window is one this process writes again and again: its next lock lingers. Others
 * (most documents of an uncontended load) are released at once, without the child watch and the
 * timer a lingering lock costs. Bounded: the oldest entries go first.
 */
export class RecentReleases {
  private readonly releasedAt: LRUCache<string, number>;
  private readonly windowMs: number;

  constructor(windowMs: number, capacity: number) {
    this.windowMs = windowMs;
    this.releasedAt = new LRUCache({ max: capacity });
  }

  noteReleased(docPath: string, now = Date.now()): void {
    if (this.windowMs <= 0) return;
    this.releasedAt.set(docPath, now);
  }

  /** Released here within the window before `now`. */
  cameBack(docPath: string, now = Date.now()): boolean {
    const at = this.releasedAt.peek(docPath);
    return at !== undefined && now - at <= this.windowMs;
  }
}
