import type { RequestEvents } from '../http/request-kind.js';
import type { UpstreamFailures } from '../elasticsearch/forwarder/upstream-failures.js';
import type { LockServiceState } from '../lock/lock-engine.js';
import type { WriteObserver } from '../write/write-observer.js';

/** In-flight lock counts, read when metrics are scraped (not counted per event). */
export interface LockActivity {
  readonly held: number;
  readonly waiting: number;
}

/**
 * The one seam through which the proxy reports what happens, to metrics and logging alike:
 * the edge (requests served), the forwarder (upstream failures), the write path (one report per
 * locked request) and the lock engine (service state, session expiries, in-flight counts). Each
 * part is handed this observer once, at assembly (`server/proxy-runtime.ts`); nothing wraps a
 * component to count what it does.
 */
export interface ProxyObserver extends RequestEvents, UpstreamFailures, WriteObserver {
  lockServiceState(state: LockServiceState): void;
  /** A lock-service session expired: every lock held in it was lost. */
  sessionExpired(): void;
  /** The lock engine deleted `count` lock nodes of its own session that no request of it claimed. */
  orphanedLocksRemoved(count: number): void;
  /** A lock's release found it lost while held, its holder never told (the owner check refused the release). */
  lockLostAtRelease(): void;
  /** ZooKeeper refused a batch lock transaction as a whole (`code`: its first failing operation's error). */
  batchTransactionRefused(code: string): void;
  /** Tells where the in-flight lock counts are read from (called once per attached engine). */
  lockActivity(read: () => LockActivity): void;
}

export const NO_OBSERVER: ProxyObserver = Object.freeze({
  requestServed: () => undefined,
  upstreamFailed: () => undefined,
  lockedRequest: () => undefined,
  fencedWrite: () => undefined,
  lockServiceState: () => undefined,
  sessionExpired: () => undefined,
  orphanedLocksRemoved: () => undefined,
  lockLostAtRelease: () => undefined,
  batchTransactionRefused: () => undefined,
  lockActivity: () => undefined,
});

/** An observer that implements only some events (the others do nothing). */
export function observer(partial: Partial<ProxyObserver>): ProxyObserver {
  return { ...NO_OBSERVER, ...partial };
}

/** Tells every observer, in order. One observer is returned as it is (no indirection per event). */
export function combineObservers(...observers: readonly ProxyObserver[]): ProxyObserver {
  if (observers.length === 1 && observers[0] !== undefined) return observers[0];
  return {
    requestServed: (kind, status) => observers.forEach((o) => o.requestServed(kind, status)),
    upstreamFailed: (code) => observers.forEach((o) => o.upstreamFailed(code)),
    lockedRequest: (report) => observers.forEach((o) => o.lockedRequest(report)),
    fencedWrite: (report) => observers.forEach((o) => o.fencedWrite(report)),
    lockServiceState: (state) => observers.forEach((o) => o.lockServiceState(state)),
    sessionExpired: () => observers.forEach((o) => o.sessionExpired()),
    orphanedLocksRemoved: (count) => observers.forEach((o) => o.orphanedLocksRemoved(count)),
    lockLostAtRelease: () => observers.forEach((o) => o.lockLostAtRelease()),
    batchTransactionRefused: (code) => observers.forEach((o) => o.batchTransactionRefused(code)),
    lockActivity: (read) => observers.forEach((o) => o.lockActivity(read)),
  };
}
