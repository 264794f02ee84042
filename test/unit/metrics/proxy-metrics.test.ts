import { describe, expect, it } from 'vitest';
import { ProxyMetrics } from '../../../src/metrics/proxy-metrics.js';
import type { LockedRequestReport } from '../../../src/write/write-observer.js';
import { parsePrometheusText, sampleValue, type Sample } from '../../support/prometheus-text.js';

const P = 'es_lock_proxy_';

function report(overrides: Partial<LockedRequestReport>): LockedRequestReport {
  return {
    requestId: 'r1',
    method: 'PUT',
    index: 'products',
    id: '42',
    priority: 'foreground',
    waitMs: 0,
    holdMs: 0,
    queuePosition: 0,
    outcome: 'acquired',
    upstreamStatus: 200,
    attempt: 1,
    ...overrides,
  };
}

async function scrape(metrics: ProxyMetrics): Promise<Sample[]> {
  return parsePrometheusText((await metrics.render()).body);
}

describe('ProxyMetrics', () => {
  it('renders the Prometheus text format with prom-client content type and process metrics', async () => {
    const metrics = new ProxyMetrics();
    const { contentType, body } = await metrics.render();
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const samples = parsePrometheusText(body);
    expect(samples.some((sample) => sample.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(sampleValue(samples, `${P}lock_acquisitions_total`, { priority: 'background' })).toBe(0);
    expect(sampleValue(samples, `${P}requests_total`, { kind: 'bulk', status_class: '5xx' })).toBe(0);
    expect(sampleValue(samples, `${P}locks_held`)).toBe(0);
  });

  it('counts an acquired lock with its wait and hold times', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    metrics.observer.lockedRequest(report({ waitMs: 30, holdMs: 1500 }));
    const samples = await scrape(metrics);
    expect(sampleValue(samples, `${P}lock_acquisitions_total`, { priority: 'foreground' })).toBe(1);
    expect(sampleValue(samples, `${P}lock_acquisitions_total`, { priority: 'background' })).toBe(0);
    const waitLabels = { priority: 'foreground', outcome: 'acquired' };
    expect(sampleValue(samples, `${P}lock_wait_seconds_count`, waitLabels)).toBe(1);
    expect(sampleValue(samples, `${P}lock_wait_seconds_sum`, waitLabels)).toBeCloseTo(0.03);
    expect(sampleValue(samples, `${P}lock_wait_seconds_bucket`, { ...waitLabels, le: '0.025' })).toBe(0);
    expect(sampleValue(samples, `${P}lock_wait_seconds_bucket`, { ...waitLabels, le: '0.05' })).toBe(1);
    expect(sampleValue(samples, `${P}lock_hold_seconds_sum`, { priority: 'foreground' })).toBeCloseTo(1.5);
    expect(sampleValue(samples, `${P}lock_hold_seconds_bucket`, { priority: 'foreground', le: '1' })).toBe(0);
    expect(sampleValue(samples, `${P}lock_hold_seconds_bucket`, { priority: 'foreground', le: '2.5' })).toBe(1);
  });

  it('maps timeouts, retries, dead letters, lost locks and aborted waits to their counters', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const observer = metrics.observer;
    observer.lockedRequest(report({ outcome: 'timeout', waitMs: 5000, upstreamStatus: null }));
    observer.lockedRequest(report({ priority: 'background', outcome: 'retried', waitMs: 20_000, attempt: 1 }));
    observer.lockedRequest(report({ priority: 'background', outcome: 'retried', waitMs: 20_000, attempt: 2 }));
    observer.lockedRequest(report({ priority: 'background', outcome: 'dead_lettered', waitMs: 60_000, attempt: 3 }));
    observer.lockedRequest(report({ outcome: 'lost', waitMs: 1, holdMs: 200 }));
    observer.lockedRequest(report({ outcome: 'aborted', waitMs: 70 }));
    observer.lockedRequest(report({ outcome: 'unavailable' }));
    const samples = await scrape(metrics);
    expect(sampleValue(samples, `${P}lock_timeouts_total`, { priority: 'foreground' })).toBe(1);
    expect(sampleValue(samples, `${P}lock_retries_total`, { priority: 'background' })).toBe(2);
    expect(sampleValue(samples, `${P}dead_letters_total`, { priority: 'background' })).toBe(1);
    // The dead-lettered request's final wait timed out as well.
    expect(sampleValue(samples, `${P}lock_timeouts_total`, { priority: 'background' })).toBe(1);
    expect(sampleValue(samples, `${P}lock_lost_total`)).toBe(1);
    expect(sampleValue(samples, `${P}lock_acquisitions_total`, { priority: 'foreground' })).toBe(1);
    expect(sampleValue(samples, `${P}lock_hold_seconds_count`, { priority: 'foreground' })).toBe(1);
    const waitCount = (priority: string, outcome: string): number =>
      sampleValue(samples, `${P}lock_wait_seconds_count`, { priority, outcome });
    expect(waitCount('foreground', 'timeout')).toBe(1);
    expect(waitCount('background', 'retried')).toBe(2);
    expect(waitCount('background', 'dead_lettered')).toBe(1);
    expect(waitCount('foreground', 'aborted')).toBe(1);
    expect(waitCount('foreground', 'unavailable')).toBe(1);
    expect(sampleValue(samples, `${P}lock_wait_seconds_sum`, { priority: 'background', outcome: 'retried' })).toBeCloseTo(40);
  });

  it('counts served requests by kind and status class, and upstream errors by code', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    metrics.observer.requestServed('write', 201);
    metrics.observer.requestServed('write', 200);
    metrics.observer.requestServed('write', 429);
    metrics.observer.requestServed('bulk', 200);
    metrics.observer.requestServed('passthrough', 503);
    metrics.observer.requestServed('by_query', 302);
    metrics.observer.upstreamFailed('UPSTREAM_TIMEOUT');
    metrics.observer.upstreamFailed('UPSTREAM_TIMEOUT');
    metrics.observer.upstreamFailed('UPSTREAM_RESET');
    const samples = await scrape(metrics);
    const served = (kind: string, statusClass: string): number =>
      sampleValue(samples, `${P}requests_total`, { kind, status_class: statusClass });
    expect(served('write', '2xx')).toBe(2);
    expect(served('write', '4xx')).toBe(1);
    expect(served('bulk', '2xx')).toBe(1);
    expect(served('passthrough', '5xx')).toBe(1);
    expect(served('by_query', '3xx')).toBe(1);
    expect(served('auto_id', '2xx')).toBe(0);
    expect(sampleValue(samples, `${P}upstream_errors_total`, { code: 'UPSTREAM_TIMEOUT' })).toBe(2);
    expect(sampleValue(samples, `${P}upstream_errors_total`, { code: 'UPSTREAM_RESET' })).toBe(1);
    expect(sampleValue(samples, `${P}upstream_errors_total`, { code: 'UPSTREAM_UNREACHABLE' })).toBe(0);
  });

  it('keeps separate counts for several instances in one process', async () => {
    const first = new ProxyMetrics();
    const second = new ProxyMetrics();
    first.observer.requestServed('write', 200);
    expect(sampleValue(await scrape(first), `${P}requests_total`, { kind: 'write', status_class: '2xx' })).toBe(1);
    expect(sampleValue(await scrape(second), `${P}requests_total`, { kind: 'write', status_class: '2xx' })).toBe(0);
  });
});
