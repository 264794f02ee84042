import type { Counter, Gauge } from 'prom-client';
import type { LockEngine, LockServiceState } from '../lock/lock-engine.js';
import { lockEvents, type LockEvents } from '../lock/lock-events.js';
import { type ActivitySource, LOCK_SERVICE_STATES } from './metric-set.js';

interface LockServiceGauges {
  readonly zookeeperConnectionState: Gauge<'state'>;
  readonly lockActivity: ActivitySource;
}

/**
 * Mirrors the engine's state into the one-hot state gauge, and lets the in-flight gauges read the
 * engine's `activity()` at scrape time. Returns an unsubscribe.
 */
export function watchLockService(engine: LockEngine, metrics: LockServiceGauges): () => void {
  const showState = (state: LockServiceState): void => {
    for (const candidate of LOCK_SERVICE_STATES) metrics.zookeeperConnectionState.set({ state: candidate }, candidate === state ? 1 : 0);
  };
  showState(engine.state());
  metrics.lockActivity.read = () => engine.activity();
  const stop = engine.onStateChange(showState);
  return () => {
    stop();
    metrics.lockActivity.read = null;
  };
}

/** The engine events metrics count (given to the engine at construction). */
export function lockEventMetrics(metrics: { readonly zookeeperSessionExpiries: Counter }): LockEvents {
  return lockEvents({ sessionExpired: () => metrics.zookeeperSessionExpiries.inc() });
}
