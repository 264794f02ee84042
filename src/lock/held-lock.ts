import type { HeldLock, LockKey, Priority } from './lock-engine.js';
import { LockLostError } from './lock-errors.js';

export interface HeldLockInit {
  readonly key: LockKey;
  readonly priority: Priority;
  readonly acquiredAt: number;
  readonly waitMs: number;
  readonly queuePositionOnArrival: number;
  /** Performs the release once; `HeldLockHandle` makes it idempotent. */
  readonly release: () => Promise<void>;
}

/** A granted lock as callers see it; shared by both engines. */
export class HeldLockHandle implements HeldLock {
  readonly key: LockKey;
  readonly priority: Priority;
  readonly acquiredAt: number;
  readonly waitMs: number;
  readonly queuePositionOnArrival: number;
  private readonly lostController = new AbortController();
  private readonly doRelease: () => Promise<void>;
  private released: Promise<void> | null = null;

  constructor(init: HeldLockInit) {
    this.key = init.key;
    this.priority = init.priority;
    this.acquiredAt = init.acquiredAt;
    this.waitMs = init.waitMs;
    this.queuePositionOnArrival = init.queuePositionOnArrival;
    this.doRelease = init.release;
  }

  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  get releasing(): boolean {
    return this.released !== null;
  }

  /** Marks the lock lost (once); returns false when it was already lost or released. */
  markLost(reason: string): boolean {
    if (this.lostController.signal.aborted || this.released !== null) return false;
    this.lostController.abort(new LockLostError(this.key, reason));
    return true;
  }

  release(): Promise<void> {
    this.released ??= this.doRelease();
    return this.released;
  }
}
