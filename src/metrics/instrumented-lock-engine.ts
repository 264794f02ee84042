import type { Gauge } from 'prom-client';
import type { AcquireManyResult, HeldLock, LockEngine } from '../lock/lock-engine.js';

interface InFlightGauges {
  readonly locksHeld: Gauge;
  readonly lockWaiters: Gauge;
}

/**
 * A LockEngine that keeps the in-flight gauges exact without the write path reporting every
 * step: a waiter is counted while `acquire`/`acquireMany` is pending, a lock while it is held
 * and its release has not settled. `close()` settles whatever the caller never released, so
 * the gauges return to zero with the engine.
 */
export function instrumentLockEngine(engine: LockEngine, gauges: InFlightGauges): LockEngine {
  const outstanding = new Set<CountedLock>();
  const countHeld = (lock: HeldLock): CountedLock => new CountedLock(lock, gauges.locksHeld, outstanding);
  const whileWaiting = async <T>(pending: () => Promise<T>): Promise<T> => {
    gauges.lockWaiters.inc();
    try {
      return await pending();
    } finally {
      gauges.lockWaiters.dec();
    }
  };
  return {
    acquire: async (key, priority, options) => countHeld(await whileWaiting(() => engine.acquire(key, priority, options))).view,
    acquireMany: async (keys, priority, options) =>
      countHeldMany(await whileWaiting(() => engine.acquireMany(keys, priority, options)), countHeld),
    inspect: (key) => engine.inspect(key),
    listHeld: (index, limit) => engine.listHeld(index, limit),
    forceRelease: (key) => engine.forceRelease(key),
    state: () => engine.state(),
    onStateChange: (listener) => engine.onStateChange(listener),
    close: async () => {
      try {
        await engine.close();
      } finally {
        for (const lock of [...outstanding]) lock.settle();
      }
    },
  };
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

/** One held lock counted in the gauge exactly once, however often `release` is called. */
class CountedLock {
  readonly view: HeldLock;
  private settled = false;
  private releasing: Promise<void> | null = null;

  constructor(
    private readonly lock: HeldLock,
    private readonly gauge: Gauge,
    private readonly outstanding: Set<CountedLock>,
  ) {
    gauge.inc();
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
    if (this.settled) return;
    this.settled = true;
    this.outstanding.delete(this);
    this.gauge.dec();
  }
}
