import { collectDefaultMetrics, Registry } from 'prom-client';
import type { ErrorCode } from '../errors/error-codes.js';
import type { LockEngine } from '../lock/lock-engine.js';
import type { LockEvents } from '../lock/lock-events.js';
import type { WriteObserver } from '../write/write-observer.js';
import { lockReportObserver } from './lock-report-observer.js';
import { lockEventMetrics, watchLockService } from './lock-service-watch.js';
import type { RequestKind } from '../write/write-path-deps.js';
import { createMetricSet, type ProxyMetricSet } from './metric-set.js';
import { statusClassOf } from './status-class.js';

export interface RenderedMetrics {
  readonly contentType: string;
  readonly body: string;
}

/**
 * The proxy's Prometheus metrics on a registry of its own (never prom-client's global one), so
 * several proxies in one process, as in the tests, keep separate counts.
 */
export class ProxyMetrics {
  readonly registry: Registry;
  private readonly metrics: ProxyMetricSet;

  constructor(options: { readonly processMetrics?: boolean } = {}) {
    this.registry = new Registry();
    this.metrics = createMetricSet(this.registry);
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Feeds lock waits, holds and outcomes from the write path's reports. */
  writeObserver(): WriteObserver {
    return lockReportObserver(this.metrics);
  }

  /** Engine events to count (session expiries): pass to the engine's constructor. */
  lockEvents(): LockEvents {
    return lockEventMetrics(this.metrics);
  }

  /** Follows the engine's connection state; `lock_waiters`/`locks_held` read its `activity()`. */
  watchLockEngine(engine: LockEngine): () => void {
    return watchLockService(engine, this.metrics);
  }

  /** Called once per answered client request. */
  requestServed(kind: RequestKind, status: number): void {
    this.metrics.requests.inc({ kind, status_class: statusClassOf(status) });
  }

  /** Called once per failed exchange with Elasticsearch (UPSTREAM_UNREACHABLE, _TIMEOUT, _RESET). */
  upstreamError(code: ErrorCode): void {
    this.metrics.upstreamErrors.inc({ code });
  }

  async render(): Promise<RenderedMetrics> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
