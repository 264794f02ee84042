import type { LockServiceState } from '../lock/lock-engine.js';
import type { LockActivity, ProxyObserver } from '../observe/proxy-observer.js';
import type { LockedRequestReport } from '../write/write-observer.js';
import { LOCK_SERVICE_STATES, type ProxyMetricSet } from './metric-set.js';
import { statusClassOf } from './status-class.js';

/**
 * The metrics side of the observer seam. Every locked-request report feeds the wait histogram
 * under its outcome; a `lost` lock was acquired and held first, so it counts as an acquisition
 * with its hold time too. A dead-lettered request's last wait timed out, so it counts as a
 * timeout as well. The in-flight gauges are read from the engine when scraped.
 */
export function metricsObserver(metrics: ProxyMetricSet, setActivity: (read: () => LockActivity) => void): ProxyObserver {
  return {
    requestServed: (kind, status) => metrics.requests.inc({ kind, status_class: statusClassOf(status) }),
    upstreamFailed: (code) => metrics.upstreamErrors.inc({ code }),
    lockedRequest: (report) => recordLockedRequest(metrics, report),
    fencedWrite: () => metrics.fencedWrites.inc(),
    lockServiceState: (state) => showState(metrics, state),
    sessionExpired: () => metrics.zookeeperSessionExpiries.inc(),
    orphanedLocksRemoved: (count) => metrics.orphanedLocksRemoved.inc(count),
    // Its write was reported acquired (it ended before anybody knew): counted here, once.
    lockLostAtRelease: () => metrics.locksLost.inc(),
    batchTransactionRefused: (code) => metrics.batchTransactionsRefused.inc({ code }),
    lockActivity: setActivity,
  };
}

function recordLockedRequest(metrics: ProxyMetricSet, report: LockedRequestReport): void {
  const { priority } = report;
  metrics.lockWaitSeconds.observe({ priority, outcome: report.outcome }, seconds(report.waitMs));
  switch (report.outcome) {
    case 'acquired':
      recordHeld(metrics, report);
      return;
    case 'lost':
      recordHeld(metrics, report);
      metrics.locksLost.inc();
      return;
    case 'timeout':
      metrics.lockTimeouts.inc({ priority });
      return;
    case 'retried':
      metrics.lockRetries.inc({ priority });
      return;
    case 'dead_lettered':
      metrics.deadLetters.inc({ priority });
      metrics.lockTimeouts.inc({ priority });
      return;
    case 'aborted':
    case 'unavailable':
      return;
  }
}

/** One-hot: 1 for the current state, 0 for the others. */
function showState(metrics: ProxyMetricSet, state: LockServiceState): void {
  for (const candidate of LOCK_SERVICE_STATES) metrics.zookeeperConnectionState.set({ state: candidate }, candidate === state ? 1 : 0);
}

function recordHeld(metrics: ProxyMetricSet, report: LockedRequestReport): void {
  metrics.lockAcquisitions.inc({ priority: report.priority });
  metrics.lockHoldSeconds.observe({ priority: report.priority }, seconds(report.holdMs));
}

function seconds(ms: number): number {
  return Math.max(0, ms) / 1000;
}
