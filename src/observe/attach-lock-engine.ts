import type { LockEngine, LockServiceState } from '../lock/lock-engine.js';
import { CountingLockEngine } from './counting-lock-engine.js';
import type { LockActivity, ProxyObserver } from './proxy-observer.js';

/**
 * What an engine may offer beyond `LockEngine` (structural, so this module names no concrete
 * engine): `activity()` for the in-flight gauges (the engine of DESIGN §1), and
 * `onSessionExpired` (today's ZooKeeper engine). The engine of DESIGN §1 reports expiries through
 * its `events` constructor option instead: pass it `lockEventsOf(observer)`.
 */
export interface ObservableEngineExtras {
  activity?(): LockActivity;
  onSessionExpired?(listener: () => void): () => void;
}

export interface AttachedLockEngine {
  /** The engine the write path should use (today's engines: one that counts held locks). */
  readonly engine: LockEngine;
  detach(): void;
}

/**
 * Connects a lock engine to the observer seam: its state changes, its session expiries (inferred
 * from a fall into `unavailable` after `connected` when the engine does not report them), and its
 * in-flight counts (from `activity()`, or counted around the engine when it has none).
 */
export function attachLockEngine(engine: LockEngine & ObservableEngineExtras, observer: ProxyObserver): AttachedLockEngine {
  let used: LockEngine = engine;
  if (engine.activity !== undefined) {
    const read = engine.activity.bind(engine);
    observer.lockActivity(read);
  } else {
    const counting = new CountingLockEngine(engine);
    used = counting.engine;
    observer.lockActivity(() => counting.activity());
  }
  observer.lockServiceState(engine.state());
  const stopStates = engine.onStateChange((state) => observer.lockServiceState(state));
  const stopExpiries = engine.onSessionExpired?.(() => observer.sessionExpired()) ?? inferExpiries(engine, observer);
  return {
    engine: used,
    detach: () => {
      stopStates();
      stopExpiries();
    },
  };
}

/** An expiry is a fall into `unavailable` from a session that had been `connected` (counted once until it connects again). */
function inferExpiries(engine: LockEngine, observer: ProxyObserver): () => void {
  let hadSession = engine.state() === 'connected';
  return engine.onStateChange((state: LockServiceState) => {
    if (state === 'connected') hadSession = true;
    if (state === 'unavailable' && hadSession) {
      hadSession = false;
      observer.sessionExpired();
    }
  });
}

/** The lock events of DESIGN §1 mapped onto the seam (metrics count per request, not per lock). */
export function lockEventsOf(observer: ProxyObserver): {
  granted(): void;
  released(): void;
  timedOut(): void;
  lost(): void;
  sessionExpired(): void;
} {
  return {
    granted: () => undefined,
    released: () => undefined,
    timedOut: () => undefined,
    lost: () => undefined,
    sessionExpired: () => observer.sessionExpired(),
  };
}
