import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { LockServiceState, Priority } from '../lock/lock-engine.js';
import type { RequestKind } from '../http/request-kind.js';
import type { LockActivity } from '../observe/proxy-observer.js';

export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'other';

export const METRIC_PREFIX = 'es_lock_proxy_';

export const PRIORITIES: readonly Priority[] = ['foreground', 'background'];
/** Every `RequestKind` (the `kind` label of `requests_total`), so each series exists from the start. */
export const REQUEST_KINDS: readonly RequestKind[] = ['write', 'bulk', 'passthrough', 'auto_id', 'by_query'];
export const LOCK_SERVICE_STATES: readonly LockServiceState[] = ['connected', 'connecting', 'suspended', 'unavailable', 'closed'];
const SERVED_STATUS_CLASSES: readonly StatusClass[] = ['2xx', '3xx', '4xx', '5xx'];
const UPSTREAM_ERROR_CODES = ['UPSTREAM_UNREACHABLE', 'UPSTREAM_TIMEOUT', 'UPSTREAM_RESET'] as const;
/** The refusals a batch acquisition meets in normal work: a document held elsewhere, a container reaped. */
const BATCH_REFUSAL_CODES = ['NODEEXISTS', 'NONODE'] as const;

/** From a millisecond uncontended wait to the tens of seconds a background write may queue. */
export const LOCK_SECONDS_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120,
];

/** Every metric the proxy exports, bound to one registry. */
export interface ProxyMetricSet {
  readonly lockWaitSeconds: Histogram<'priority' | 'outcome'>;
  readonly lockHoldSeconds: Histogram<'priority'>;
  readonly lockAcquisitions: Counter<'priority'>;
  readonly lockTimeouts: Counter<'priority'>;
  readonly lockRetries: Counter<'priority'>;
  readonly deadLetters: Counter<'priority'>;
  readonly locksLost: Counter;
  readonly fencedWrites: Counter;
  readonly requests: Counter<'kind' | 'status_class'>;
  readonly locksHeld: Gauge;
  readonly lockWaiters: Gauge;
  readonly zookeeperConnectionState: Gauge<'state'>;
  readonly zookeeperSessionExpiries: Counter;
  readonly orphanedLocksRemoved: Counter;
  readonly batchTransactionsRefused: Counter<'code'>;
  readonly upstreamErrors: Counter<'code'>;
}

/**
 * `activity` is read when the registry is scraped (the in-flight gauges are not updated per lock).
 */
export function createMetricSet(register: Registry, activity: () => LockActivity): ProxyMetricSet {
  const registers = [register];
  const set: ProxyMetricSet = {
    lockWaitSeconds: new Histogram({
      name: `${METRIC_PREFIX}lock_wait_seconds`,
      help: 'Time a locked request waited in the lock queue, by priority and outcome',
      labelNames: ['priority', 'outcome'],
      buckets: [...LOCK_SECONDS_BUCKETS],
      registers,
    }),
    lockHoldSeconds: new Histogram({
      name: `${METRIC_PREFIX}lock_hold_seconds`,
      help: 'Time a lock was held (forwarding the write upstream until release)',
      labelNames: ['priority'],
      buckets: [...LOCK_SECONDS_BUCKETS],
      registers,
    }),
    lockAcquisitions: perPriorityCounter(registers, 'lock_acquisitions_total', 'Locked requests that obtained their lock(s)'),
    lockTimeouts: perPriorityCounter(registers, 'lock_timeouts_total', 'Locked requests whose final lock wait timed out'),
    lockRetries: perPriorityCounter(registers, 'lock_retries_total', 'Background lock waits that timed out and were re-queued'),
    deadLetters: perPriorityCounter(registers, 'dead_letters_total', 'Requests appended to the dead-letter queue'),
    locksLost: new Counter({
      name: `${METRIC_PREFIX}lock_lost_total`,
      help: 'Held locks the engine could no longer vouch for (session expiry, suspension, forced release, deleted by hand — also when only their release found it out)',
      registers,
    }),
    fencedWrites: new Counter({
      name: `${METRIC_PREFIX}fenced_writes_total`,
      help: 'Writes (or bulk items) sent after their lock was lost that Elasticsearch refused with 409 thanks to their fence (proxy.fencing=on)',
      registers,
    }),
    requests: new Counter({
      name: `${METRIC_PREFIX}requests_total`,
      help: 'Requests answered, by kind and HTTP status class',
      labelNames: ['kind', 'status_class'],
      registers,
    }),
    locksHeld: new Gauge({
      name: `${METRIC_PREFIX}locks_held`,
      help: 'Locks currently held by in-flight requests',
      registers,
      collect() {
        this.set(activity().held);
      },
    }),
    lockWaiters: new Gauge({
      name: `${METRIC_PREFIX}lock_waiters`,
      help: 'Requests currently waiting for a lock',
      registers,
      collect() {
        this.set(activity().waiting);
      },
    }),
    zookeeperConnectionState: new Gauge({
      name: `${METRIC_PREFIX}zookeeper_connection_state`,
      help: 'Lock service state: 1 for the current state, 0 for the others',
      labelNames: ['state'],
      registers,
    }),
    zookeeperSessionExpiries: new Counter({
      name: `${METRIC_PREFIX}zookeeper_session_expiries_total`,
      help: 'ZooKeeper sessions that expired (every lock held in them was lost)',
      registers,
    }),
    orphanedLocksRemoved: new Counter({
      name: `${METRIC_PREFIX}orphaned_locks_removed_total`,
      help: 'Lock nodes (privateLock or queue entry) of the proxy\'s own ZooKeeper session that no request of it claimed, deleted by its orphan sweep',
      registers,
    }),
    batchTransactionsRefused: new Counter({
      name: `${METRIC_PREFIX}zookeeper_batch_refused_total`,
      help: 'Batch lock transactions (a bulk\'s keys, or single writes taken together) ZooKeeper refused as a whole, by the first failing operation\'s error; each costs a round trip and nearly a committed transaction\'s work on the server',
      labelNames: ['code'],
      registers,
    }),
    upstreamErrors: new Counter({
      name: `${METRIC_PREFIX}upstream_errors_total`,
      help: 'Failed exchanges with Elasticsearch, by proxy error code',
      labelNames: ['code'],
      registers,
    }),
  };
  initialiseSeries(set);
  return set;
}

function perPriorityCounter(registers: Registry[], name: string, help: string): Counter<'priority'> {
  return new Counter({ name: `${METRIC_PREFIX}${name}`, help, labelNames: ['priority'], registers });
}

/**
 * Series exist at zero from the start: `rate()` and absent-series alerts need a first sample
 * before the first event, not after it.
 */
function initialiseSeries(set: ProxyMetricSet): void {
  for (const priority of PRIORITIES) {
    for (const counter of [set.lockAcquisitions, set.lockTimeouts, set.lockRetries, set.deadLetters]) counter.inc({ priority }, 0);
  }
  for (const kind of REQUEST_KINDS) {
    for (const status_class of SERVED_STATUS_CLASSES) set.requests.inc({ kind, status_class }, 0);
  }
  for (const code of UPSTREAM_ERROR_CODES) set.upstreamErrors.inc({ code }, 0);
  for (const code of BATCH_REFUSAL_CODES) set.batchTransactionsRefused.inc({ code }, 0);
  for (const state of LOCK_SERVICE_STATES) set.zookeeperConnectionState.set({ state }, 0);
}

