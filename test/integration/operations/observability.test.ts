import { afterEach, describe, expect, inject, it } from 'vitest';
import { connectRawClient } from '../../support/zk-raw-client.js';
import { isZkCode } from '../../../src/zookeeper-client/zk-errors.js';
import { documentPath } from '../../../src/lock/zookeeper/znode-names.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { eventually, startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { FOREGROUND, send, sendHolder } from '../write/write-client.js';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';

let stack: WriteStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function scrape(): Promise<ReturnType<typeof parsePrometheusText>> {
  const response = await fetch(`${stack!.adminUrls[0]}/metrics`);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return parsePrometheusText(await response.text());
}

describe.each(LOCK_BACKENDS)('metrics and lock inspection through a running proxy ($name locks)', (locks) => {

  it('counts acquisitions, timeouts, requests by kind and lock waits', async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), settings: { lock: { foregroundTimeoutMs: 200 } } });
    const before = await scrape();
    // The holder's acquisition (sendHolder sends it as background); the foreground write times out.
    const acquisitions = (s: typeof before) => sampleValue(s, 'es_lock_proxy_lock_acquisitions_total', { priority: 'background' }) ?? 0;
    const timeouts = (s: typeof before) => sampleValue(s, 'es_lock_proxy_lock_timeouts_total', { priority: 'foreground' }) ?? 0;

    const gate = stack.standIn.gateDocument('products', 'hot');
    const { answer: holder } = await sendHolder(gate, stack.urls[0]!, '/products/_doc/hot', {});
    const waiting = await scrape();
    expect(sampleValue(waiting, 'es_lock_proxy_locks_held', {})).toBe(1);
    expect((await send(stack.urls[0]!, 'PUT', '/products/_doc/hot', {}, FOREGROUND)).status).toBe(429);
    gate.release();
    await holder;
    await send(stack.urls[0]!, 'GET', '/products/_doc/hot');

    const after = await eventually(async () => {
      const samples = await scrape();
      return sampleValue(samples, 'es_lock_proxy_locks_held', {}) === 0 ? samples : undefined;
    });
    expect(acquisitions(after) - acquisitions(before)).toBe(1);
    expect(timeouts(after) - timeouts(before)).toBe(1);
    expect(sampleValue(after, 'es_lock_proxy_requests_total', { kind: 'write', status_class: '2xx' })).toBe(1);
    expect(sampleValue(after, 'es_lock_proxy_requests_total', { kind: 'write', status_class: '4xx' })).toBe(1);
    expect(sampleValue(after, 'es_lock_proxy_requests_total', { kind: 'passthrough', status_class: '2xx' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(after, 'es_lock_proxy_lock_wait_seconds_count', { priority: 'foreground', outcome: 'timeout' })).toBe(1);
    expect(sampleValue(after, 'es_lock_proxy_zookeeper_connection_state', { state: 'connected' })).toBe(1);
    expect(after.some((sample) => sample.name === 'process_cpu_user_seconds_total')).toBe(true);
  });

  it('shows the holder and queue of a document held by a slow write, and force-releases only with the token', async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      proxies: 2,
      settings: { lock: { foregroundTimeoutMs: 20_000 }, proxy: { adminToken: 's3cret-token' } },
    });
    const gate = stack.standIn.gateDocument('products', 'a/b');
    const holder = send(stack.urls[0]!, 'PUT', '/products/_doc/a%2Fb', { writer: 'slow' });
    await gate.arrived(1);
    const waiter = send(stack.urls[1]!, 'PUT', '/products/_doc/a%2Fb', { writer: 'next' }, { 'X-Lock-Type': 'bg' });

    const inspection = await eventually(async () => {
      const body = (await (await fetch(`${stack!.adminUrls[1]}/locks/products/a%2Fb`)).json()) as {
        holder: { owner: { requestId: string; pid: number }; priority: string; message: string } | null;
        queue: { priority: string }[];
      };
      return body.queue.length === 1 ? body : undefined;
    });
    expect(inspection.holder).toMatchObject({ priority: 'foreground', owner: { pid: process.pid }, message: 'PUT /products/_doc/a%2Fb' });
    expect(inspection.queue.map((entry) => entry.priority)).toEqual(['background']);
    const listing = (await (await fetch(`${stack.adminUrls[0]}/locks?index=products`)).json()) as { locks: unknown[] };
    expect(listing.locks).toHaveLength(1);

    const locksUrl = `${stack.adminUrls[0]}/locks/products/a%2Fb`;
    expect((await fetch(locksUrl, { method: 'DELETE' })).status).toBe(403);
    expect((await fetch(locksUrl, { method: 'DELETE', headers: { authorization: 'Bearer wrong' } })).status).toBe(403);
    const released = await fetch(locksUrl, { method: 'DELETE', headers: { authorization: 'Bearer s3cret-token' } });
    expect(released.status).toBe(200);
    // The waiter now holds the lock: it reaches the (still gated) stand-in next to the old holder.
    await gate.arrived(2);
    gate.release();
    expect((await holder).status).toBe(201);
    expect((await waiter).status).toBe(200);
  });

});

describe('secured lock nodes in ZooKeeper', () => {
  it('with zookeeper.auth set, another ZooKeeper client cannot delete a lock node', async () => {
    stack = await startWriteStack({
      zookeeper: inject('zookeeperConnect'),
      settings: { zookeeper: { auth: { scheme: 'digest', credentials: 'proxy:pa55' } } },
    });
    const gate = stack.standIn.gateDocument('products', 'secured');
    const holder = send(stack.urls[0]!, 'PUT', '/products/_doc/secured', {});
    await gate.arrived(1);
    const privateLock = `${documentPath(stack.lockRoot, { index: 'products', id: 'secured' })}/privateLock`;

    const intruder = await connectRawClient(inject('zookeeperConnect'), 4_000);
    try {
      const attempt = await intruder.client.delete(privateLock).then(
        () => 'deleted',
        (error: unknown) => error,
      );
      expect(isZkCode(attempt, 'NOAUTH')).toBe(true);
    } finally {
      await intruder.close();
    }
    gate.release();
    expect((await holder).status).toBe(201);
  });
});
