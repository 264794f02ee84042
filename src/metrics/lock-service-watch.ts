import type { Counter, Gauge } from 'prom-client';
import type { LockEngine, LockServiceState } from '../lock/lock-engine.js';
import { LOCK_SERVICE_STATES } from './metric-set.js';

/**
 * Optional capability of an engine that knows when its session expired (the ZooKeeper engine).
 * Structural so that this module does not depend on a concrete engine: any engine with this
 * method gets exact expiry counts; others are counted by inference (see `watchLockService`).
 */
export interface SessionExpiryEvents {
  /** Calls `listener` once per expired session; returns an unsubscribe function. */
  onSessionExpired(listener: () => void): () => void;
}

export type WatchableLockEngine = LockEngine & Partial<SessionExpiryEvents>;

interface LockServiceGauges {
  readonly zookeeperConnectionState: Gauge<'state'>;
  readonly zookeeperSessionExpiries: Counter;
}

/**
 * Mirrors the engine's state into the one-hot state gauge and counts session expiries. Without
 * `onSessionExpired`, an expiry is inferred as a fall into `unavailable` from a session that had
 * been `connected` (counted once until the engine connects again). Returns an unsubscribe.
 */
export function watchLockService(engine: WatchableLockEngine, metrics: LockServiceGauges): () => void {
  const showState = (state: LockServiceState): void => {
    for (const candidate of LOCK_SERVICE_STATES) metrics.zookeeperConnectionState.set({ state: candidate }, candidate === state ? 1 : 0);
  };
  showState(engine.state());
  const countExpiry = (): void => metrics.zookeeperSessionExpiries.inc();
  if (engine.onSessionExpired !== undefined) {
    const stopStates = engine.onStateChange(showState);
    const stopExpiries = engine.onSessionExpired(countExpiry);
    return () => {
      stopStates();
      stopExpiries();
    };
  }
  let hadSession = engine.state() === 'connected';
  return engine.onStateChange((state) => {
    showState(state);
    if (state === 'connected') hadSession = true;
    if (state === 'unavailable' && hadSession) {
      hadSession = false;
      countExpiry();
    }
  });
}
