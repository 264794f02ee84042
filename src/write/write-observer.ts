import type { Logger } from 'pino';
import type { InterceptedRequest } from '../http/write-interceptor.js';
import type { LockKey, Priority } from '../lock/lock-engine.js';

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

/** Receives write-path events (the write path's part of `observe/proxy-observer.ts`). */
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

/** Reports of one single-document write, the fields that do not change bound once. */
export function singleWriteReporter(observer: WriteObserver, exchange: InterceptedRequest, key: LockKey, priority: Priority) {
  return (
    outcome: LockOutcome,
    waitMs: number,
    holdMs: number,
    upstreamStatus: number | null,
    attempt: number,
    queuePosition: number | null = null,
  ): void =>
    observer.lockedRequest({
      requestId: exchange.requestId,
      method: exchange.req.method ?? '',
      index: key.index,
      id: key.id,
      priority,
      waitMs,
      holdMs,
      queuePosition,
      outcome,
      upstreamStatus,
      attempt,
    });
}
