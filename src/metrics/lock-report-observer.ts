import type { LockedRequestReport, WriteObserver } from '../write/write-observer.js';
import type { ProxyMetricSet } from './metric-set.js';

type LockReportMetrics = Pick<
  ProxyMetricSet,
  'lockWaitSeconds' | 'lockHoldSeconds' | 'lockAcquisitions' | 'lockTimeouts' | 'lockRetries' | 'deadLetters' | 'locksLost'
>;

/**
 * Turns the write path's one-report-per-locked-request into metrics. Every report feeds the
 * wait histogram under its outcome; a `lost` lock was acquired and held first, so it counts as
 * an acquisition with its hold time too. A dead-lettered request's last wait timed out, so it
 * counts as a timeout as well.
 */
export function lockReportObserver(metrics: LockReportMetrics): WriteObserver {
  return {
    lockedRequest(report) {
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
    },
  };
}

function recordHeld(metrics: LockReportMetrics, report: LockedRequestReport): void {
  metrics.lockAcquisitions.inc({ priority: report.priority });
  metrics.lockHoldSeconds.observe({ priority: report.priority }, seconds(report.holdMs));
}

function seconds(ms: number): number {
  return Math.max(0, ms) / 1000;
}
