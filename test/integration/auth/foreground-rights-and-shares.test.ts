import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { parsePrometheusText } from '../../support/prometheus-text.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ZkWireTap } from '../../support/zk-wire-tap.js';
import { BACKGROUND, FOREGROUND, send } from '../write/write-client.js';
import { ALICE, apiKey, BATCH, lockCreates, SECURITY, securedSettings, warmUp } from './security-fixture.js';
import type { AuthSettings } from '../../../src/auth/auth-settings.js';

async function metric(stack: WriteStack, name: string, labels: Record<string, string>): Promise<number> {
  const samples = parsePrometheusText((await stack.proxies[0]!.metrics.render()).body);
  return samples
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}

describe('who may write in the foreground, and each principal’s share', () => {
  let stack: WriteStack | undefined;
  let tap: ZkWireTap | undefined;
  afterEach(async () => {
    await stack?.close();
    await tap?.close();
    stack = undefined;
    tap = undefined;
  });

  async function start(auth: Partial<AuthSettings>): Promise<WriteStack> {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    stack = await startWriteStack({ zookeeper: tap.connectString, standIn: { security: SECURITY }, settings: securedSettings(auth) });
    return stack;
  }

  it('a foreground write from someone outside proxy.priority.foreground.allow is locked as background, counted and said', async () => {
    const proxy = await start({ foregroundAllow: ['role:interactive'] });
    const allowed = await send(proxy.urls[0]!, 'PUT', '/fg/_doc/alice', { by: 'alice' }, { ...FOREGROUND, ...ALICE });
    const demoted = await send(proxy.urls[0]!, 'PUT', '/fg/_doc/batch', { by: 'batch' }, { ...FOREGROUND, ...BATCH });
    expect([allowed.status, demoted.status]).toEqual([201, 201]);
    expect(allowed.headers.get('x-lock-priority')).toBeNull();
    expect(demoted.headers.get('x-lock-priority')).toBe('background');
    expect(proxy.standIn.document('fg', 'batch')?.source).toEqual({ by: 'batch' });
    await vi.waitFor(async () => {
      expect(await metric(proxy, 'es_lock_proxy_principal_lock_wait_seconds_count', { principal: 'batch', priority: 'background' })).toBe(1);
      expect(await metric(proxy, 'es_lock_proxy_principal_lock_wait_seconds_count', { principal: 'alice', priority: 'foreground' })).toBe(1);
    });
    expect(await metric(proxy, 'es_lock_proxy_foreground_denied_total', { principal: 'batch', action: 'background' })).toBe(1);
    const bulk = `${JSON.stringify({ index: { _index: 'fg', _id: 'bulk' } })}\n{"by":"bulk"}\n`;
    const demotedBulk = await send(proxy.urls[0]!, 'POST', '/_bulk', bulk, { 'content-type': 'application/x-ndjson', ...FOREGROUND, ...BATCH });
    expect(demotedBulk.status).toBe(200);
    expect(demotedBulk.headers.get('x-lock-priority')).toBe('background');
    expect(proxy.standIn.document('fg', 'bulk')?.source).toEqual({ by: 'bulk' });
    // Background asked is background, from anyone.
    expect((await send(proxy.urls[0]!, 'PUT', '/fg/_doc/bg', {}, { ...BACKGROUND, ...BATCH })).headers.get('x-lock-priority')).toBeNull();
  });

  it('with proxy.priority.foreground.denied=reject the write is refused with 403 in Elasticsearch’s shape, before any lock', async () => {
    const proxy = await start({ foregroundAllow: ['ingest'], foregroundDenied: 'reject' });
    await warmUp(proxy, tap);
    tap!.resetCounts();
    const refused = await send(proxy.urls[0]!, 'PUT', '/fg/_doc/alice', { by: 'alice' }, { ...FOREGROUND, ...ALICE });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ error: { type: 'security_exception' }, status: 403 });
    expect(lockCreates(tap!)).toBe(0);
    expect(proxy.standIn.document('fg', 'alice')).toBeUndefined();
    expect(await metric(proxy, 'es_lock_proxy_foreground_denied_total', { principal: 'alice', action: 'reject' })).toBe(1);
    expect((await send(proxy.urls[0]!, 'PUT', '/fg/_doc/key', { by: 'key' }, { ...FOREGROUND, ...apiKey('key-1', 'key-1-secret') })).status).toBe(201);
  });

  it('past proxy.lock.max.waiting.per.principal a write is answered 429 with Retry-After before any lock; others still get in', async () => {
    const proxy = await start({ maxWaitingPerPrincipal: 2 });
    const gate = proxy.standIn.gateDocument('share', 'hot');
    const held = [send(proxy.urls[0]!, 'PUT', '/share/_doc/hot', { n: 1 }, { ...BACKGROUND, ...BATCH })];
    await gate.arrived(1);
    held.push(send(proxy.urls[0]!, 'PUT', '/share/_doc/hot', { n: 2 }, { ...BACKGROUND, ...BATCH }));
    await vi.waitFor(() => expect(proxy.proxies[0]!.locks.activity().waiting).toBe(1));
    const refused = await send(proxy.urls[0]!, 'PUT', '/share/_doc/other', { n: 3 }, { ...BACKGROUND, ...BATCH });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.json).toMatchObject({ error: { type: 'es_rejected_execution_exception' }, status: 429 });
    expect(proxy.standIn.document('share', 'other')).toBeUndefined();
    const alice = await send(proxy.urls[0]!, 'PUT', '/share/_doc/alice', { n: 4 }, ALICE);
    expect(alice.status).toBe(201);
    gate.release();
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([201, 200]);
    expect(proxy.standIn.document('share', 'hot')?.source).toEqual({ n: 2 });
    expect(await metric(proxy, 'es_lock_proxy_principal_share_refused_total', { principal: 'batch' })).toBe(1);
    // The share was given back: batch writes again.
    expect((await send(proxy.urls[0]!, 'PUT', '/share/_doc/other', { n: 5 }, BATCH)).status).toBe(201);
  });
});
