import { LRUCache } from 'lru-cache';

/**
 * Documents whose lock this process gave back a moment ago. A document that comes back soon is
 * one this process writes again and again: its next lock keeps the document container at its
 * release, and (within the linger window) lingers. Others (most documents of an uncontended load)
 * are released at once, container and all, without the child watch and the timer a lingering
 * lock costs. Bounded: the oldest entries go first.
 */
export class RecentReleases {
  private readonly releasedAt: LRUCache<string, number>;
  private readonly windowMs: number;

  /** `windowMs`: how long a release is remembered. */
  constructor(windowMs: number, capacity: number) {
    this.windowMs = windowMs;
    this.releasedAt = new LRUCache({ max: capacity });
  }

  noteReleased(docPath: string, now = Date.now()): void {
    if (this.windowMs <= 0) return;
    this.releasedAt.set(docPath, now);
  }

  /** Ms between the latest release here and `now`; Infinity when there is none within the window. */
  releasedAgoMs(docPath: string, now = Date.now()): number {
    const at = this.releasedAt.peek(docPath);
    return at !== undefined && now - at <= this.windowMs ? now - at : Number.POSITIVE_INFINITY;
  }
}
