import { collectDefaultMetrics, Registry } from 'prom-client';
import type { LockActivity, ProxyObserver } from '../observe/proxy-observer.js';
import { createMetricSet } from './metric-set.js';
import { metricsObserver } from './metrics-observer.js';

export interface RenderedMetrics {
  readonly contentType: string;
  readonly body: string;
}

const IDLE: LockActivity = Object.freeze({ held: 0, waiting: 0 });

/**
 * The proxy's Prometheus metrics on a registry of its own (never prom-client's global one), so
 * several proxies in one process, as in the tests, keep separate counts. Fed only through
 * `observer`, the proxy's one observer seam.
 */
export class ProxyMetrics {
  readonly registry: Registry;
  readonly observer: ProxyObserver;
  private activity: () => LockActivity = () => IDLE;

  constructor(options: { readonly processMetrics?: boolean } = {}) {
    this.registry = new Registry();
    const metrics = createMetricSet(this.registry, () => this.activity());
    this.observer = metricsObserver(metrics, (read) => (this.activity = read));
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  async render(): Promise<RenderedMetrics> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
