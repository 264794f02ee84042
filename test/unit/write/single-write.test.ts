import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { expectNoLocksLeft, gate, startWritePath, until, type ScriptedAnswer, type WritePathHarness } from './write-harness.js';

const CREATED: ScriptedAnswer = { status: 201, body: { _index: 'products', _id: '1', result: 'created' } };

let harness: WritePathHarness;
afterEach(async () => {
  await harness?.engine.close();
});

describe('single-document writes', () => {
  it('forwards a write while its lock is held and releases the lock once Elasticsearch answered', async () => {
    harness = startWritePath();
    const write = harness.start('PUT', '/products/_doc/1', { body: { name: 'x' } });
    await write.done;
    expect(write.res.statusCode).toBe(201);
    expect(write.res.json()).toMatchObject({ _index: 'products', _id: '1', result: 'created' });
    const [call] = harness.forwarder.calls;
    expect(call).toMatchObject({ method: 'PUT', url: '/products/_doc/1', body: '{"name":"x"}', sent: true, veto: null });
    expect(call!.checkedAtHandOver).toBe(true);
    expect(call!.holdersAtSend).toEqual({ 'products/1': write.exchange.requestId });
    // The proxy's lock header never reaches Elasticsearch; the answer is asked uncompressed (it is read).
    expect(call!.dropHeaders).toEqual(expect.arrayContaining(['x-lock-type', 'accept-encoding']));
    expect(harness.timeline).toEqual(['grant products/1', 'send#1 products/1', 'answer#1', 'release products/1']);
    await expectNoLocksLeft(harness);
    expect(harness.reports).toEqual([
      expect.objectContaining({ requestId: write.exchange.requestId, id: '1', outcome: 'acquired', upstreamStatus: 201, attempt: 1 }),
    ]);
  });

  it.each([
    [409, { error: { type: 'version_conflict_engine_exception', reason: '[1]: version conflict' }, status: 409 }],
    [429, { error: { type: 'es_rejected_execution_exception', reason: 'rejected execution' }, status: 429 }],
    [503, { error: { type: 'unavailable_shards_exception', reason: 'primary shard is not active' }, status: 503 }],
  ])('relays Elasticsearch\'s %i answer unchanged and releases the lock', async (status, body) => {
    harness = startWritePath();
    harness.forwarder.respond = () => ({ status, body });
    const res = await harness.write('PUT', '/products/_doc/1', { body: {} });
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual(body);
    expect(res.headers['x-elastic-product']).toBe('Elasticsearch');
    await expectNoLocksLeft(harness);
    expect(await harness.holderOf('products', '1')).toBeNull();
  });

  it('holds a second write to the same document until the first was answered', async () => {
    harness = startWritePath();
    const slow = gate<ScriptedAnswer>();
    harness.forwarder.respond = (call) => (call.seq === 1 ? slow.promise : CREATED);
    const first = harness.start('PUT', '/products/_doc/1', { body: { v: 1 } });
    await until(() => expect(harness.forwarder.sent).toHaveLength(1));
    const second = harness.start('PUT', '/products/_doc/1', { body: { v: 2 } });
    await until(async () => expect(await harness.queueLength('products', '1')).toBe(1));
    // Elasticsearch is still working on the first: the second must not be on its way.
    expect(harness.forwarder.calls).toHaveLength(1);
    slow.open(CREATED);
    await Promise.all([first.done, second.done]);
    expect([first.res.statusCode, second.res.statusCode]).toEqual([201, 201]);
    expect(harness.forwarder.sent.map((call) => call.body)).toEqual(['{"v":1}', '{"v":2}']);
    expect(harness.forwarder.sent[1]!.holdersAtSend).toEqual({ 'products/1': second.exchange.requestId });
    expect(harness.timeline.indexOf('send#2 products/1')).toBeGreaterThan(harness.timeline.indexOf('answer#1'));
    await expectNoLocksLeft(harness);
  });

  it('does not hold writes to other documents behind a slow one', async () => {
    harness = startWritePath();
    const slow = gate<ScriptedAnswer>();
    harness.forwarder.respond = (call) => (call.url === '/products/_doc/1' ? slow.promise : CREATED);
    const first = harness.start('PUT', '/products/_doc/1', { body: {} });
    const other = await harness.write('PUT', '/products/_doc/2', { body: {} });
    expect(other.statusCode).toBe(201);
    slow.open(CREATED);
    await first.done;
    await expectNoLocksLeft(harness);
  });

  it('serves a queued foreground write before a background one that queued earlier', async () => {
    harness = startWritePath();
    const blocker = await harness.block('products', '1');
    const background = harness.start('PUT', '/products/_doc/1', { body: { who: 'background' }, priority: 'background' });
    await until(async () => expect(await harness.queueLength('products', '1')).toBe(1));
    const foreground = harness.start('PUT', '/products/_doc/1', { body: { who: 'foreground' }, priority: 'foreground' });
    await until(async () => expect(await harness.queueLength('products', '1')).toBe(2));
    expect(harness.forwarder.calls).toHaveLength(0);
    await blocker.release();
    await Promise.all([background.done, foreground.done]);
    expect(harness.forwarder.sent.map((call) => JSON.parse(call.body).who)).toEqual(['foreground', 'background']);
    await expectNoLocksLeft(harness);
  });

  it('answers a lock wait timeout with 429 in Elasticsearch\'s error shape and forwards nothing', async () => {
    harness = startWritePath({ lock: { foregroundTimeoutMs: 30 } });
    await harness.block('products', '1');
    const res = await harness.write('PUT', '/products/_doc/1', { body: {} });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['x-elastic-product']).toBe('Elasticsearch');
    const body = res.json();
    expect(body).toEqual({
      error: { root_cause: [{ type: 'lock_wait_timeout_exception', reason: body.error.reason }], type: 'lock_wait_timeout_exception', reason: body.error.reason },
      status: 429,
    });
    expect(body.error.reason).toMatch(/^lock wait for document \[products\]\[1\] timed out after \d+ms$/);
    expect(harness.forwarder.calls).toHaveLength(0);
    // Foreground writes are never dead-lettered; the other holder keeps its lock, no waiter is left.
    expect(harness.deadLetters.records).toHaveLength(0);
    expect(await harness.holderOf('products', '1')).toBe('blocker');
    expect(harness.engine.activity()).toEqual({ held: 1, waiting: 0 });
    expect(harness.reports.map((report) => report.outcome)).toEqual(['timeout']);
  });

  it('rounds Retry-After up to the lock timeout in seconds', async () => {
    harness = startWritePath({ lock: { foregroundTimeoutMs: 1_001 } });
    vi.useFakeTimers();
    try {
      await harness.block('products', '1');
      const write = harness.start('PUT', '/products/_doc/1', { body: {} });
      await vi.advanceTimersByTimeAsync(1_001);
      await write.done;
      expect(write.res.statusCode).toBe(429);
      expect(write.res.headers['retry-after']).toBe('2');
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers 502 and releases the lock when no Elasticsearch node can be reached', async () => {
    harness = startWritePath();
    harness.forwarder.connecting = async () => {
      throw new ProxyError('UPSTREAM_UNREACHABLE', 'no Elasticsearch node could be reached: fake:9200 (ECONNREFUSED)');
    };
    const res = await harness.write('PUT', '/products/_doc/1', { body: {} });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.type).toBe('upstream_unreachable_exception');
    expect(harness.forwarder.sent).toHaveLength(0);
    await expectNoLocksLeft(harness);
  });

  it.each([
    ['UPSTREAM_TIMEOUT', 504, 'upstream_timeout_exception'],
    ['UPSTREAM_RESET', 502, 'upstream_connection_reset_exception'],
  ] as const)('answers %s after the write was sent with %i and releases the lock', async (code, status, type) => {
    harness = startWritePath();
    harness.forwarder.respond = () => ({ failAfterSend: new ProxyError(code, 'fake upstream failure') });
    const res = await harness.write('PUT', '/products/_doc/1', { body: {} });
    expect(res.statusCode).toBe(status);
    expect(res.json()).toMatchObject({ error: { type }, status });
    await expectNoLocksLeft(harness);
  });

  it('does not send a write whose lock was lost while connecting: 503, and the next holder goes alone', async () => {
    harness = startWritePath();
    const connected = gate<void>();
    harness.forwarder.connecting = async (call) => {
      if (call.seq === 1) await connected.promise;
    };
    const first = harness.start('PUT', '/products/_doc/1', { body: { v: 1 } });
    await until(() => expect(harness.forwarder.calls).toHaveLength(1));
    const second = harness.start('PUT', '/products/_doc/1', { body: { v: 2 } });
    await until(async () => expect(await harness.queueLength('products', '1')).toBe(1));
    // An operator takes the lock away while the first write's connection is being set up.
    expect(await harness.engine.forceRelease({ index: 'products', id: '1' })).toBe(true);
    await second.done;
    connected.open();
    await first.done;
    expect(first.res.statusCode).toBe(503);
    expect(first.res.json().error.type).toBe('lock_service_unavailable_exception');
    expect(harness.forwarder.calls[0]).toMatchObject({ sent: false, veto: expect.objectContaining({ code: 'LOCK_LOST' }) });
    expect(second.res.statusCode).toBe(201);
    expect(harness.forwarder.sent.map((call) => call.body)).toEqual(['{"v":2}']);
    await expectNoLocksLeft(harness);
    expect(harness.reports.find((report) => report.requestId === first.exchange.requestId)?.outcome).toBe('lost');
  });

  it('leaves the queue when the client hangs up while waiting, and forwards nothing', async () => {
    harness = startWritePath();
    await harness.block('products', '1');
    const write = harness.start('PUT', '/products/_doc/1', { body: {} });
    await until(async () => expect(await harness.queueLength('products', '1')).toBe(1));
    write.hangUp();
    await write.done;
    expect(harness.forwarder.calls).toHaveLength(0);
    expect(await harness.queueLength('products', '1')).toBe(0);
    expect(harness.engine.activity()).toEqual({ held: 1, waiting: 0 });
    expect(harness.reports.map((report) => report.outcome)).toEqual(['aborted']);
  });

  it('answers 503 in Elasticsearch\'s shape when the lock service is gone, and forwards nothing', async () => {
    harness = startWritePath();
    await harness.engine.close();
    const res = await harness.write('PUT', '/products/_doc/1', { body: {} });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: { type: 'lock_service_unavailable_exception' }, status: 503 });
    expect(harness.forwarder.calls).toHaveLength(0);
    expect(harness.reports.map((report) => report.outcome)).toEqual(['unavailable']);
  });

  it('refuses an invalid lock header with 400 before taking any lock', async () => {
    harness = startWritePath();
    const res = await harness.write('PUT', '/products/_doc/1', { body: {}, headers: { 'X-Lock-Type': 'urgent' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.type).toBe('illegal_argument_exception');
    expect(harness.forwarder.calls).toHaveLength(0);
    expect(harness.timeline).toEqual([]);
  });

  describe('aliases', () => {
    it('keys a write to the write index of an alias on the alias, so it waits for writes through the alias', async () => {
      harness = startWritePath();
      harness.aliases.set('logs-000001', { isAlias: false, writeAliases: ['logs'], writeIndex: 'logs-000001' });
      harness.aliases.set('logs', { isAlias: true, writeAliases: [], writeIndex: 'logs-000001' });
      const throughAlias = await harness.block('logs', '7');
      const direct = harness.start('PUT', '/logs-000001/_doc/7', { body: {} });
      await until(async () => expect(await harness.queueLength('logs', '7')).toBe(1));
      expect(harness.forwarder.calls).toHaveLength(0);
      await throughAlias.release();
      await direct.done;
      expect(direct.res.statusCode).toBe(201);
      expect(await harness.holderOf('logs', '7')).toBeNull();
      await expectNoLocksLeft(harness);
    });

    it('answers 503 without locking or forwarding when the alias look-up fails', async () => {
      harness = startWritePath();
      harness.aliases.set('logs', new Error('connect ECONNREFUSED'));
      const res = await harness.write('PUT', '/logs/_doc/7', { body: {} });
      expect(res.statusCode).toBe(503);
      expect(res.json().error).toMatchObject({ type: 'alias_resolution_exception' });
      expect(res.json().error.reason).toContain('[logs]');
      expect(harness.forwarder.calls).toHaveLength(0);
      expect(harness.timeline).toEqual([]);
    });
  });
});
