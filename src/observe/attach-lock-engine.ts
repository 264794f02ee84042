import type { LockEngine } from '../lock/lock-engine.js';
import { lockEvents, type LockEvents } from '../lock/lock-events.js';
import type { ProxyObserver } from './proxy-observer.js';

/**
 * Connects a lock engine to the observer seam: its state changes, and its in-flight counts, read
 * from `activity()` when metrics are scraped. Returns the function that detaches it. Session
 * expiries, orphan removals and refused batch transactions reach the seam through the engine's own events: build it with `lockEventsOf(observer)`.
 */
export function attachLockEngine(engine: LockEngine, observer: ProxyObserver): () => void {
  observer.lockActivity(() => engine.activity());
  observer.lockServiceState(engine.state());
  return engine.onStateChange((state) => observer.lockServiceState(state));
}

/** The engine events the seam takes (metrics count locks per request, from the write path's reports). */
export function lockEventsOf(observer: ProxyObserver): LockEvents {
  return lockEvents({
    sessionExpired: () => observer.sessionExpired(),
    orphansRemoved: (count) => observer.orphanedLocksRemoved(count),
    lostAtRelease: () => observer.lockLostAtRelease(),
    batchRefused: ({ code }) => observer.batchTransactionRefused(code),
  });
}
