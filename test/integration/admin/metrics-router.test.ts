import { afterEach, describe, expect, it } from 'vitest';
import { metricsRouter } from '../../../src/http/admin/metrics-router.js';
import type { HeldLock } from '../../../src/lock/lock-engine.js';
import { attachLockEngine } from '../../../src/observe/attach-lock-engine.js';
import { ProxyMetrics } from '../../../src/metrics/proxy-metrics.js';
import { parsePrometheusText, sampleValue, type Sample } from '../../support/prometheus-text.js';
import { startAdminTestServer } from './admin-test-server.js';
import { startTestLockEngine } from './test-lock-engine.js';

const P = 'es_lock_proxy_';
const OWNER = { host: 'proxy-a', pid: 1, requestId: 'r' };
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scrape(baseUrl: string): Promise<{ contentType: string | null; samples: Sample[] }> {
  const response = await fetch(`${baseUrl}/metrics`);
  expect(response.status).toBe(200);
  return { contentType: response.headers.get('content-type'), samples: parsePrometheusText(await response.text()) };
}

describe('GET /metrics', () => {
  it('serves the text format, reflecting reports and in-flight locks of a real engine', async () => {
    const metrics = new ProxyMetrics();
    const engine = await startTestLockEngine();
    cleanups.push(() => engine.close());
    const detach = attachLockEngine(engine, metrics.observer);
    cleanups.push(async () => detach());
    const server = await startAdminTestServer(metricsRouter(metrics));
    cleanups.push(() => server.close());

    const key = { index: `metrics-it-${process.pid}`, id: '1' };
    const held = await engine.acquire(key, 'foreground', { timeoutMs: 10_000, owner: OWNER });
    let waiter: Promise<HeldLock> | null = engine.acquire(key, 'background', { timeoutMs: 10_000, owner: OWNER });
    try {
      const during = await scrape(server.baseUrl);
      expect(during.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(sampleValue(during.samples, `${P}locks_held`)).toBe(1);
      expect(sampleValue(during.samples, `${P}lock_waiters`)).toBe(1);
      expect(sampleValue(during.samples, `${P}zookeeper_connection_state`, { state: engine.state() })).toBe(1);
      expect(during.samples.some((sample) => sample.name === 'nodejs_heap_size_used_bytes')).toBe(true);

      metrics.observer.lockedRequest({
        requestId: 'r',
        method: 'PUT',
        index: key.index,
        id: key.id,
        priority: 'foreground',
        waitMs: held.waitMs,
        holdMs: 12,
        queuePosition: held.queuePositionOnArrival,
        outcome: 'acquired',
        upstreamStatus: 200,
        attempt: 1,
      });
      metrics.observer.requestServed('write', 200);
      await held.release();
      const successor: HeldLock = await waiter;
      waiter = null;
      await successor.release();

      const after = await scrape(server.baseUrl);
      expect(sampleValue(after.samples, `${P}locks_held`)).toBe(0);
      expect(sampleValue(after.samples, `${P}lock_waiters`)).toBe(0);
      expect(sampleValue(after.samples, `${P}lock_acquisitions_total`, { priority: 'foreground' })).toBe(1);
      expect(sampleValue(after.samples, `${P}lock_hold_seconds_count`, { priority: 'foreground' })).toBe(1);
      expect(sampleValue(after.samples, `${P}requests_total`, { kind: 'write', status_class: '2xx' })).toBe(1);
    } finally {
      await held.release();
      if (waiter !== null) await (await waiter).release();
    }
  });
});
