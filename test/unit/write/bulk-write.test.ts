import { afterEach, describe, expect, it } from 'vitest';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { bulkLines, bulkOf, ELASTICSEARCH_ACCEPTS, expectNoLocksLeft, ndjson, NDJSON, startWritePath, until, type ScriptedAnswer, type WritePathHarness } from './write-harness.js';

type ItemResult = Record<string, { _index: string; _id: string; status: number; error?: { type: string; reason: string } }>;

/** `[action, _id, status]` of each item of a bulk answer. */
function itemsOf(body: { items: ItemResult[] }): [string, string, number][] {
  return body.items.map((item) => {
    const [action, result] = Object.entries(item)[0]!;
    return [action, result._id, result.status];
  });
}

/** `id:n` of each document a forwarded sub-bulk carried, in order (n tells repeated items apart). */
function carried(body: string): string[] {
  const lines = body.split('\n').filter((line) => line !== '');
  const ids = bulkLines(body)!.map((item) => item.id);
  return ids.map((id, i) => `${id}:${JSON.parse(lines[i * 2 + 1]!).n}`);
}

let harness: WritePathHarness;
afterEach(async () => {
  await harness?.engine.close();
});

describe('_bulk writes', () => {
  it('forwards an uncontended bulk as it came, every lock held at hand-over, and frees every lock after the answer', async () => {
    harness = startWritePath();
    // Elasticsearch's answer reaches the client as it was sent (streamed), fields the proxy does not know included.
    let upstreamBody = '';
    harness.forwarder.respond = (call) => {
      const accepted = ELASTICSEARCH_ACCEPTS(call) as { status: number; body: object };
      upstreamBody = JSON.stringify({ ...accepted.body, ingest_took: 1 });
      return { status: 200, body: upstreamBody, headers: { Warning: '299 Elasticsearch "deprecated"' } };
    };
    const body = bulkOf([['products', 'a'], ['products', 'b'], ['orders', 'a'], ['products', 'a']]);
    const write = harness.start('POST', '/_bulk', { body, headers: NDJSON });
    await write.done;
    expect(write.res.statusCode).toBe(200);
    expect(write.res.body.toString()).toBe(upstreamBody);
    expect(write.res.headers.warning).toBe('299 Elasticsearch "deprecated"');
    expect(harness.forwarder.sent).toHaveLength(1);
    const [call] = harness.forwarder.sent;
    expect(call!.body).toBe(body);
    expect(call!.url).toBe('/_bulk');
    expect(call!.checkedAtHandOver).toBe(true);
    const owner = write.exchange.requestId;
    expect(call!.holdersAtSend).toEqual({ 'products/a': owner, 'products/b': owner, 'orders/a': owner });
    expect(itemsOf(write.res.json())).toEqual([
      ['index', 'a', 201],
      ['index', 'b', 201],
      ['index', 'a', 201],
      ['index', 'a', 201],
    ]);
    // Every release comes after the answer.
    const answered = harness.timeline.indexOf('answer#1');
    expect(harness.timeline.slice(answered + 1).sort()).toEqual(['release orders/a', 'release products/a', 'release products/b']);
    await expectNoLocksLeft(harness);
    expect(harness.reports).toEqual([expect.objectContaining({ documents: 3, outcome: 'acquired', upstreamStatus: 200 })]);
  });

  it('sends the free documents at once and a held document\'s items together, in order, when its lock comes', async () => {
    harness = startWritePath();
    const blocker = await harness.block('products', 'held');
    const write = harness.start('POST', '/products/_bulk', {
      body: bulkOf([['products', 'a'], ['products', 'held'], ['products', 'b'], ['products', 'held']]),
      headers: NDJSON,
    });
    await until(() => expect(harness.forwarder.sent).toHaveLength(1));
    expect(carried(harness.forwarder.sent[0]!.body)).toEqual(['a:0', 'b:2']);
    expect(harness.forwarder.sent[0]!.holdersAtSend).toEqual({ 'products/a': write.exchange.requestId, 'products/b': write.exchange.requestId });
    // Sub-bulk answers are merged: asked for without compression.
    expect(harness.forwarder.sent[0]!.dropHeaders).toContain('accept-encoding');
    // The free documents' locks are not kept while the held one is awaited.
    await until(async () => expect(await harness.holderOf('products', 'a')).toBeNull());
    expect(await harness.holderOf('products', 'b')).toBeNull();
    await blocker.release();
    await write.done;
    expect(harness.forwarder.sent).toHaveLength(2);
    expect(carried(harness.forwarder.sent[1]!.body)).toEqual(['held:1', 'held:3']);
    expect(harness.forwarder.sent[1]!.holdersAtSend).toEqual({ 'products/held': write.exchange.requestId });
    expect(write.res.statusCode).toBe(200);
    const answer = write.res.json();
    expect(itemsOf(answer)).toEqual([
      ['index', 'a', 201],
      ['index', 'held', 201],
      ['index', 'b', 201],
      ['index', 'held', 201],
    ]);
    expect(answer.errors).toBe(false);
    // `took` adds up the sub-bulks Elasticsearch answered.
    expect(answer.took).toBe(6);
    expect(write.res.headers['x-elastic-product']).toBe('Elasticsearch');
    await expectNoLocksLeft(harness);
  });

  it('merges Elasticsearch\'s item failures in the client\'s order with errors set', async () => {
    harness = startWritePath();
    const blocker = await harness.block('products', 'late');
    harness.forwarder.respond = (call) => {
      const answer = ELASTICSEARCH_ACCEPTS(call) as { status: number; body: { took: number; errors: boolean; items: ItemResult[] } };
      // The first sub-bulk's second item conflicts.
      if (call.seq === 1) {
        answer.body.items[1] = { create: { _index: 'products', _id: 'c', status: 409, error: { type: 'version_conflict_engine_exception', reason: 'exists' } } };
        answer.body.errors = true;
      }
      return answer;
    };
    const write = harness.start('POST', '/_bulk', {
      body: ndjson([
        { index: { _index: 'products', _id: 'late' } }, { n: 0 },
        { index: { _index: 'products', _id: 'a' } }, { n: 1 },
        { create: { _index: 'products', _id: 'c' } }, { n: 2 },
        { delete: { _index: 'products', _id: 'late' } },
      ]),
      headers: NDJSON,
    });
    await until(() => expect(harness.forwarder.sent).toHaveLength(1));
    await blocker.release();
    await write.done;
    const answer = write.res.json();
    expect(itemsOf(answer)).toEqual([
      ['index', 'late', 201],
      ['index', 'a', 201],
      ['create', 'c', 409],
      ['delete', 'late', 201],
    ]);
    expect(answer.items[2].create.error.type).toBe('version_conflict_engine_exception');
    expect(answer.errors).toBe(true);
    await expectNoLocksLeft(harness);
  });

  it('answers items whose lock wait timed out with per-item 429s in a 200 answer', async () => {
    harness = startWritePath({ lock: { foregroundTimeoutMs: 40 } });
    await harness.block('products', 'held');
    const res = await harness.write('POST', '/_bulk', { body: bulkOf([['products', 'held'], ['products', 'free']]), headers: NDJSON });
    expect(res.statusCode).toBe(200);
    const answer = res.json();
    expect(itemsOf(answer)).toEqual([
      ['index', 'held', 429],
      ['index', 'free', 201],
    ]);
    expect(answer.items[0].index.error).toEqual({
      type: 'lock_wait_timeout_exception',
      reason: expect.stringMatching(/^lock wait for document \[products\]\[held\] timed out after \d+ms$/),
    });
    expect(answer.errors).toBe(true);
    expect(carried(harness.forwarder.sent.map((call) => call.body).join(''))).toEqual(['free:1']);
    expect(harness.deadLetters.records).toHaveLength(0);
    // Only the other writer's lock remains.
    // A bulk releases right after the turn its answer came in.
    await until(() => expect(harness.engine.activity()).toEqual({ held: 1, waiting: 0 }));
    expect(await harness.holderOf('products', 'held')).toBe('blocker');
  });

  it('relays Elasticsearch\'s rejection of the first sub-bulk as the answer and sends nothing else', async () => {
    harness = startWritePath();
    const blocker = await harness.block('products', 'held');
    const rejection = { error: { type: 'security_exception', reason: 'action [indices:data/write/bulk] is unauthorized' }, status: 403 };
    harness.forwarder.respond = () => ({ status: 403, body: rejection });
    const write = harness.start('POST', '/_bulk', { body: bulkOf([['products', 'free'], ['products', 'held']]), headers: NDJSON });
    await write.done;
    expect(write.res.statusCode).toBe(403);
    expect(write.res.json()).toEqual(rejection);
    expect(harness.forwarder.calls).toHaveLength(1);
    // The wait for the held document ended with the answer.
    expect(await harness.queueLength('products', 'held')).toBe(0);
    await blocker.release();
    await expectNoLocksLeft(harness);
  });

  it.each([
    ['a network failure', { failAfterSend: new ProxyError('UPSTREAM_RESET', 'connection reset') }, 502, 'upstream_connection_reset_exception'],
    ['an answer that is not a bulk answer', { status: 200, body: 'not json' }, 502, 'upstream_connection_reset_exception'],
    ['a timeout', { failAfterSend: new ProxyError('UPSTREAM_TIMEOUT', 'no answer') }, 504, 'upstream_timeout_exception'],
  ] as const)('fails the items of a later sub-bulk lost to %s, and only those', async (_case, failure, status, type) => {
    harness = startWritePath();
    const blocker = await harness.block('products', 'held');
    harness.forwarder.respond = (call) => (call.seq === 2 ? (failure as ScriptedAnswer) : ELASTICSEARCH_ACCEPTS(call));
    const write = harness.start('POST', '/_bulk', { body: bulkOf([['products', 'held'], ['products', 'free']]), headers: NDJSON });
    await until(() => expect(harness.forwarder.sent).toHaveLength(1));
    await blocker.release();
    await write.done;
    expect(write.res.statusCode).toBe(200);
    const answer = write.res.json();
    expect(itemsOf(answer)).toEqual([
      ['index', 'held', status],
      ['index', 'free', 201],
    ]);
    expect(answer.items[0].index.error.type).toBe(type);
    expect(answer.errors).toBe(true);
    await expectNoLocksLeft(harness);
  });

  it.each([
    ['Elasticsearch\'s 429', { status: 429, body: { error: { root_cause: [{ type: 'es_rejected_execution_exception', reason: 'rejected' }], type: 'es_rejected_execution_exception', reason: 'rejected' }, status: 429 } }, 429, { type: 'es_rejected_execution_exception', reason: 'rejected' }],
    ['a body not in Elasticsearch\'s shape', { status: 503, body: '<html>Service Unavailable</html>' }, 503, { type: 'status_exception', reason: 'Elasticsearch refused a sub-bulk of this request with 503' }],
    ['an error given as a string', { status: 400, body: { error: 'bad request', status: 400 } }, 400, { type: 'status_exception', reason: 'bad request' }],
  ] as const)('answers the items of a later sub-bulk refused as a whole (%s) with its status and error', async (_case, refusal, status, error) => {
    harness = startWritePath();
    const blocker = await harness.block('products', 'held');
    harness.forwarder.respond = (call) => (call.seq === 2 ? (refusal as ScriptedAnswer) : ELASTICSEARCH_ACCEPTS(call));
    const write = harness.start('POST', '/_bulk', { body: bulkOf([['products', 'held'], ['products', 'free']]), headers: NDJSON });
    await until(() => expect(harness.forwarder.sent).toHaveLength(1));
    await blocker.release();
    await write.done;
    expect(write.res.statusCode).toBe(200);
    const answer = write.res.json();
    expect(answer.items[0]).toEqual({ index: { _index: 'products', _id: 'held', status, error } });
    expect(itemsOf(answer)).toEqual([
      ['index', 'held', status],
      ['index', 'free', 201],
    ]);
    await expectNoLocksLeft(harness);
  });

  it('forwards an item with an empty _id for Elasticsearch to fail on its own, and frees its lock', async () => {
    harness = startWritePath();
    harness.forwarder.respond = (call) => {
      const items = bulkLines(call.body)!.map(({ action, index, id }) =>
        id === ''
          ? { [action]: { _index: index, _id: '', status: 400, error: { type: 'illegal_argument_exception', reason: 'if _id is specified it must not be empty' } } }
          : { [action]: { _index: index, _id: id, status: 201, result: 'created' } },
      );
      return { status: 200, body: { took: 1, errors: true, items } };
    };
    const res = await harness.write('POST', '/_bulk', {
      body: ndjson([{ index: { _index: 'aaa', _id: '1' } }, { n: 0 }, { index: { _index: 'zzz', _id: '' } }, { n: 1 }]),
      headers: NDJSON,
    });
    expect(res.statusCode).toBe(200);
    expect(itemsOf(res.json())).toEqual([
      ['index', '1', 201],
      ['index', '', 400],
    ]);
    expect(res.json().errors).toBe(true);
    await expectNoLocksLeft(harness);
  });

  it('refuses a bulk Elasticsearch would refuse as a whole (delete without _id) before locking anything', async () => {
    harness = startWritePath();
    const res = await harness.write('POST', '/_bulk', {
      body: ndjson([{ index: { _index: 'aaa', _id: '1' } }, { n: 0 }, { delete: { _index: 'aaa', _id: '' } }]),
      headers: NDJSON,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.reason).toBe('Validation Failed: 1: id is missing (action/metadata line [3]);');
    expect(harness.forwarder.calls).toHaveLength(0);
    expect(harness.timeline).toEqual([]);
  });

  it('sends items without an id, unlocked, with the first sub-bulk that goes, in request order', async () => {
    harness = startWritePath();
    const blocker = await harness.block('products', 'held');
    const write = harness.start('POST', '/_bulk', {
      body: ndjson([
        { index: { _index: 'products', _id: 'held' } }, { n: 0 },
        { index: { _index: 'products', _id: 'free' } }, { n: 1 },
        { index: { _index: 'products' } }, { n: 2 },
        { index: { _index: 'products', _id: 'other' } }, { n: 3 },
      ]),
      headers: NDJSON,
    });
    await until(() => expect(harness.forwarder.sent).toHaveLength(1));
    expect(carried(harness.forwarder.sent[0]!.body)).toEqual(['free:1', 'null:2', 'other:3']);
    expect(harness.forwarder.sent[0]!.holdersAtSend).toEqual({ 'products/free': write.exchange.requestId, 'products/other': write.exchange.requestId });
    await blocker.release();
    await write.done;
    expect(carried(harness.forwarder.sent[1]!.body)).toEqual(['held:0']);
    expect(itemsOf(write.res.json())).toEqual([
      ['index', 'held', 201],
      ['index', 'free', 201],
      ['index', 'generated', 201],
      ['index', 'other', 201],
    ]);
    await expectNoLocksLeft(harness);
  });

  it('sends items without an id on their own when every lock wait of the bulk timed out', async () => {
    harness = startWritePath({ lock: { foregroundTimeoutMs: 30 } });
    await harness.block('products', 'held');
    const res = await harness.write('POST', '/_bulk', {
      body: ndjson([{ index: { _index: 'products', _id: 'held' } }, { n: 0 }, { index: { _index: 'products' } }, { n: 1 }]),
      headers: NDJSON,
    });
    expect(harness.forwarder.sent.map((call) => carried(call.body))).toEqual([['null:1']]);
    expect(itemsOf(res.json())).toEqual([
      ['index', 'held', 429],
      ['index', 'generated', 201],
    ]);
    // A bulk releases right after the turn its answer came in.
    await until(() => expect(harness.engine.activity()).toEqual({ held: 1, waiting: 0 }));
  });

  it('forwards sub-bulks without the client\'s filter_path and applies it to the merged answer', async () => {
    harness = startWritePath();
    const blocker = await harness.block('products', 'held');
    const write = harness.start('POST', '/_bulk?refresh=wait_for&filter_path=items.*.status', {
      body: bulkOf([['products', 'held'], ['products', 'free']]),
      headers: NDJSON,
    });
    await until(() => expect(harness.forwarder.sent).toHaveLength(1));
    await blocker.release();
    await write.done;
    expect(harness.forwarder.sent.map((call) => call.url)).toEqual(['/_bulk?refresh=wait_for', '/_bulk?refresh=wait_for']);
    expect(write.res.json()).toEqual({ items: [{ index: { status: 201 } }, { index: { status: 201 } }] });
  });

  it('answers a whole 503 when the lock service is gone before anything was forwarded', async () => {
    harness = startWritePath();
    await harness.engine.close();
    const res = await harness.write('POST', '/_bulk', { body: bulkOf([['products', 'a']]), headers: NDJSON });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: { type: 'lock_service_unavailable_exception' }, status: 503 });
    expect(harness.forwarder.calls).toHaveLength(0);
  });

  it('fails only the waiting items, per item, when the lock service goes away after a sub-bulk was forwarded', async () => {
    harness = startWritePath();
    await harness.block('products', 'held');
    const write = harness.start('POST', '/_bulk', { body: bulkOf([['products', 'free'], ['products', 'held']]), headers: NDJSON });
    await until(() => expect(harness.forwarder.sent).toHaveLength(1));
    await harness.engine.close();
    await write.done;
    expect(write.res.statusCode).toBe(200);
    expect(itemsOf(write.res.json())).toEqual([
      ['index', 'free', 201],
      ['index', 'held', 503],
    ]);
    expect(write.res.json().items[1].index.error.type).toBe('lock_service_unavailable_exception');
    expect(harness.forwarder.sent).toHaveLength(1);
  });

  it('answers 503 without locking or forwarding when an item\'s alias cannot be resolved', async () => {
    harness = startWritePath();
    harness.aliases.set('logs', new Error('connect ECONNREFUSED'));
    const res = await harness.write('POST', '/_bulk', { body: bulkOf([['products', 'a'], ['logs', 'b']]), headers: NDJSON });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.type).toBe('alias_resolution_exception');
    expect(harness.forwarder.calls).toHaveLength(0);
    expect(harness.timeline).toEqual([]);
  });

  describe('locks lost before hand-over', () => {
    it('does not send a whole bulk whose lock was lost while connecting: 503', async () => {
      harness = startWritePath();
      harness.forwarder.connecting = async () => {
        await harness.engine.forceRelease({ index: 'products', id: 'b' });
      };
      const res = await harness.write('POST', '/_bulk', { body: bulkOf([['products', 'a'], ['products', 'b']]), headers: NDJSON });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.type).toBe('lock_service_unavailable_exception');
      expect(res.json().error.reason).toContain('[products][b]');
      expect(harness.forwarder.calls[0]).toMatchObject({ sent: false, veto: expect.objectContaining({ code: 'LOCK_LOST' }) });
      await expectNoLocksLeft(harness);
    });

    it('does not send a sub-bulk whose lock was lost while connecting: its items 503, the others written', async () => {
      harness = startWritePath();
      const blocker = await harness.block('products', 'held');
      harness.forwarder.connecting = async (call) => {
        if (call.seq === 1) await harness.engine.forceRelease({ index: 'products', id: 'free' });
      };
      const write = harness.start('POST', '/_bulk', { body: bulkOf([['products', 'free'], ['products', 'held']]), headers: NDJSON });
      await until(() => expect(harness.forwarder.calls).toHaveLength(1));
      await until(async () => expect(await harness.holderOf('products', 'free')).toBeNull());
      await blocker.release();
      await write.done;
      expect(harness.forwarder.sent.map((call) => carried(call.body))).toEqual([['held:1']]);
      const answer = write.res.json();
      expect(itemsOf(answer)).toEqual([
        ['index', 'free', 503],
        ['index', 'held', 201],
      ]);
      expect(answer.items[0].index.error.type).toBe('lock_service_unavailable_exception');
      expect(answer.errors).toBe(true);
      await expectNoLocksLeft(harness);
    });
  });

  it('stops waiting and forwards nothing more when the client hangs up', async () => {
    harness = startWritePath();
    await harness.block('products', 'held');
    const write = harness.start('POST', '/_bulk', { body: bulkOf([['products', 'free'], ['products', 'held']]), headers: NDJSON });
    await until(() => expect(harness.forwarder.sent).toHaveLength(1));
    write.hangUp();
    await write.done;
    expect(harness.forwarder.calls).toHaveLength(1);
    // A bulk releases right after the turn its answer came in.
    await until(() => expect(harness.engine.activity()).toEqual({ held: 1, waiting: 0 }));
    expect(harness.reports.map((report) => report.outcome)).toEqual(['aborted']);
  });
});
