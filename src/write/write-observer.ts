import type { Logger } from 'pino';
import type { WriteRequest } from './write-request.js';
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

/** A write the fence stopped: sent under a lock that was lost meanwhile, refused 409 by Elasticsearch. */
export interface FencedWriteReport {
  readonly requestId: string;
  readonly index: string;
  readonly id: string;
  /** The client's action (`index`, `update`, `delete`), for a bulk item its action line's. */
  readonly action: string;
  /** Elasticsearch's reason (`[id]: version conflict, …`). */
  readonly reason: string;
}

/** Receives write-path events (the write path's part of `observe/proxy-observer.ts`). */
export interface WriteObserver {
  lockedRequest(report: LockedRequestReport): void;
  fencedWrite(report: FencedWriteReport): void;
}

/** One pino line per locked request; waits above the slow threshold log at warn. */
export function loggingObserver(logger: Logger, slowLockMs: () => number): WriteObserver {
  return {
    lockedRequest(report) {
      const slow = report.waitMs > slowLockMs();
      const level = report.outcome === 'lost' ? 'error' : slow || report.outcome !== 'acquired' ? 'warn' : 'info';
      logger[level]({ lock: report }, slow ? 'slow lock wait' : 'locked write');
    },
    fencedWrite(report) {
      // Expected after a lost lock: the stale write was stopped, nothing overwritten.
      logger.warn({ fenced: report, key: `${report.index}/${report.id}` }, 'stale write refused by its fence');
    },
  };
}

/** Reports of one single-document write, the fields that do not change bound once. */
export function singleWriteReporter(observer: WriteObserver, exchange: WriteRequest, key: LockKey, priority: Priority) {
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
