import type { Logger } from 'pino';
import type { Priority } from '../lock/lock-engine.js';

export type LockOutcome = 'acquired' | 'timeout' | 'retried' | 'dead_lettered' | 'lost' | 'aborted' | 'unavailable';

/** What one locked request did, reported once when it is over (and once per background retry). */
export interface LockedRequestReport {
  readonly requestId: string;
  readonly method: string;
  readonly index: string;
  /** Single-document writes. */
  readonly id?: string;
  /** Bulk requests: documents locked (distinct keys). */
  readonly documents?: number;
  readonly priority: Priority;
  readonly waitMs: number;
  readonly holdMs: number;
  readonly queuePosition: number | null;
  readonly outcome: LockOutcome;
  readonly upstreamStatus: number | null;
  readonly attempt: number;
  readonly deadLetterId?: string;
}

/** Receives write-path events; logging and metrics each implement it. */
export interface WriteObserver {
  lockedRequest(report: LockedRequestReport): void;
}

/** One pino line per locked request; waits above the slow threshold log at warn. */
export function loggingObserver(logger: Logger, slowLockMs: () => number): WriteObserver {
  return {
    lockedRequest(report) {
      const slow = report.waitMs > slowLockMs();
      const level = report.outcome === 'lost' ? 'error' : slow || report.outcome !== 'acquired' ? 'warn' : 'info';
      logger[level]({ lock: report }, slow ? 'slow lock wait' : 'locked write');
    },
  };
}

export function combineObservers(...observers: readonly WriteObserver[]): WriteObserver {
  return {
    lockedRequest(report) {
      for (const observer of observers) observer.lockedRequest(report);
    },
  };
}
