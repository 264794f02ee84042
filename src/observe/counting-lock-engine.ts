import type { AcquireManyResult, HeldLock, LockEngine } from '../lock/lock-engine.js';
import type { LockActivity } from './proxy-observer.js';

/**
 * For an engine that cannot say how many locks are held and awaited (today's engines have no
 * `activity()`): counts a waiter while `acquire`/`acquireMany` is pending and a lock while it is
 * held and its release has not settled. `close()` settles whatever the caller never released, so
 * the counts return to zero with the engine. An engine with `activity()` needs none of this.
 */
export class CountingLockEngine {
  readonly engine: LockEngine;
  private waiting = 0;
  private readonly outstanding = new Set<CountedLock>();

  constructor(inner: LockEngine) {
    const countHeld = (lock: HeldLock): CountedLock => new CountedLock(lock, this.outstanding);
    const whileWaiting = async <T>(pending: () => Promise<T>): Promise<T> => {
      this.waiting += 1;
      try {
        return await pending();
      } finally {
        this.waiting -= 1;
      }
    };
    this.engine = {
      acquire: async (key, priority, options) => countHeld(await whileWaiting(() => inner.acquire(key, priority, options))).view,
      acquireMany: async (keys, priority, options) =>
        countHeldMany(await whileWaiting(() => inner.acquireMany(keys, priority, options)), countHeld),
      inspect: (key) => inner.inspect(key),
      listHeld: (index, limit) => inner.listHeld(index, limit),
      forceRelease: (key) => inner.forceRelease(key),
      state: () => inner.state(),
      onStateChange: (listener) => inner.onStateChange(listener),
      close: async () => {
        try {
          await inner.close();
        } finally {
          for (const lock of [...this.outstanding]) lock.settle();
        }
      },
    };
  }

  activity(): LockActivity {
    return { held: this.outstanding.size, waiting: this.waiting };
  }
}

function countHeldMany(result: AcquireManyResult, countHeld: (lock: HeldLock) => CountedLock): AcquireManyResult {
  const counted = result.acquired.map(countHeld);
  return {
    acquired: counted.map((lock) => lock.view),
    timedOut: result.timedOut,
    releaseAll: async () => {
      try {
        await result.releaseAll();
      } finally {
        for (const lock of counted) lock.settle();
      }
    },
  };
}

/** One held lock counted exactly once, however often `release` is called. */
class CountedLock {
  readonly view: HeldLock;
  private releasing: Promise<void> | null = null;

  constructor(
    private readonly lock: HeldLock,
    private readonly outstanding: Set<CountedLock>,
  ) {
    outstanding.add(this);
    this.view = {
      key: lock.key,
      priority: lock.priority,
      acquiredAt: lock.acquiredAt,
      waitMs: lock.waitMs,
      queuePositionOnArrival: lock.queuePositionOnArrival,
      lost: lock.lost,
      release: () => this.release(),
    };
  }

  release(): Promise<void> {
    this.releasing ??= this.lock.release().finally(() => this.settle());
    return this.releasing;
  }

  settle(): void {
    this.outstanding.delete(this);
  }
}
