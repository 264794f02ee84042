import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ndjson, send } from './write-client.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };

/** proxy.fencing=on on one proxy, without faults: what a client sees, and what reaches the cluster. */
describe.each(LOCK_BACKENDS)('fenced writes ($name locks)', (locks) => {
  let stack: WriteStack;
  let url: string;

  beforeAll(async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), settings: { proxy: { fencing: 'on' } } });
    url = stack.urls[0] ?? '';
  });
  afterAll(async () => {
    await stack?.close();
  });

  const historyOf = (index: string, id: string): unknown[] => stack.standIn.history(index, id).map((write) => [write.body, write.result ?? write.error]);

  it('answers like Elasticsearch: create of a missing document as 201, later writes as 200, the query string kept', async () => {
    expect((await send(url, 'PUT', '/plain/_doc/1?refresh=wait_for', { v: 1 })).status).toBe(201);
    expect((await send(url, 'PUT', '/plain/_doc/1?refresh=wait_for', { v: 2 })).json).toMatchObject({ result: 'updated', _version: 2 });
    expect((await send(url, 'POST', '/plain/_update/1', { doc: { w: 1 } })).status).toBe(200);
    expect((await send(url, 'DELETE', '/plain/_doc/1')).json).toMatchObject({ result: 'deleted' });
    const writes = stack.standIn.requests.filter((request) => request.method !== 'GET' && request.url.startsWith('/plain/'));
    expect(writes.map((request) => request.url.replace(/if_seq_no=\d+/, 'if_seq_no=S'))).toEqual([
      '/plain/_doc/1?refresh=wait_for&op_type=create',
      '/plain/_doc/1?refresh=wait_for&if_seq_no=S&if_primary_term=1',
      '/plain/_update/1?if_seq_no=S&if_primary_term=1',
      '/plain/_doc/1?if_seq_no=S&if_primary_term=1',
    ]);
  });

  it('forwards writes with their own concurrency control, creates and upserts unchanged and unread', async () => {
    stack.standIn.resetLog();
    expect((await send(url, 'PUT', '/own/_create/1', { v: 1 })).status).toBe(201);
    expect((await send(url, 'PUT', '/own/_doc/1?if_seq_no=999&if_primary_term=1', { v: 2 })).status).toBe(409);
    expect((await send(url, 'POST', '/own/_update/2', { doc: { v: 1 }, doc_as_upsert: true })).status).toBe(201);
    expect(stack.standIn.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
      'GET /own/_alias',
      'PUT /own/_create/1',
      // Looked up again: "no such index" is never kept (it may become a rollover's write index).
      'GET /own/_alias',
      'PUT /own/_doc/1?if_seq_no=999&if_primary_term=1',
      'POST /own/_update/2',
    ]);
  });

  it('fails closed: a read the cluster refuses answers 503 fencing_unavailable_exception and forwards nothing', async () => {
    await send(url, 'PUT', '/closed/_doc/1', { v: 1 });
    stack.standIn.resetLog();
    const refuse = stack.standIn.onRequest((request, res) => {
      if (!(request.url.includes('realtime=true'))) return false;
      res.writeHead(403, { 'content-type': 'application/json', 'X-elastic-product': 'Elasticsearch' });
      res.end(JSON.stringify({ error: { type: 'security_exception', reason: 'no read privilege' }, status: 403 }));
      return true;
    });
    try {
      const single = await send(url, 'PUT', '/closed/_doc/1', { v: 2 });
      expect(single.status).toBe(503);
      expect(single.json).toMatchObject({ error: { type: 'fencing_unavailable_exception' }, status: 503 });
      // Keys no request of this proxy holds (the single write's lock on 1 may still linger):
      // both are taken in one batch, so both items travel in the one sub-bulk whose read fails.
      const bulk = await send(url, 'POST', '/_bulk', ndjson([{ index: { _index: 'closed', _id: '3' } }, { v: 3 }, { create: { _index: 'closed', _id: '2' } }, { v: 1 }]), NDJSON);
      expect(bulk.status).toBe(200);
      expect(bulk.json.items).toMatchObject([{ index: { status: 503, error: { type: 'fencing_unavailable_exception' } } }, { create: { status: 503 } }]);
    } finally {
      refuse();
    }
    expect(stack.standIn.requests.filter((request) => request.method !== 'GET' && !request.url.startsWith('/_mget'))).toEqual([]);
    expect(stack.standIn.document('closed', '1')?.source).toEqual({ v: 1 });
  });

  it('retries under a still-usable lock when the document changed between read and write outside the proxy', async () => {
    await send(url, 'PUT', '/bypass/_doc/1', { from: 'seed' });
    let bypassed = false;
    const bypass = stack.standIn.onRequest(async (request) => {
      if (bypassed || request.method !== 'PUT' || !request.url.startsWith('/bypass/_doc/1?if_seq_no')) return false;
      bypassed = true;
      // A writer that does not go through the proxy lands between the proxy's read and its write.
      await fetch(`${stack.standIn.url}/bypass/_doc/1`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"from":"outside"}' });
      return false;
    });
    try {
      expect((await send(url, 'PUT', '/bypass/_doc/1', { from: 'client' })).status).toBe(200);
    } finally {
      bypass();
    }
    expect(historyOf('bypass', '1')).toEqual([
      [{ from: 'seed' }, 'created'],
      [{ from: 'outside' }, 'updated'],
      [{ from: 'client' }, 'version_conflict_engine_exception'],
      [{ from: 'client' }, 'updated'],
    ]);
    expect(stack.standIn.document('bypass', '1')?.source).toEqual({ from: 'client' });
  });

  it('a bulk with several items of one document sends them in waves, each fenced; index answers keep their key', async () => {
    stack.standIn.resetLog();
    const answer = await send(
      url,
      'POST',
      '/_bulk',
      ndjson([{ index: { _index: 'waves', _id: 'a' } }, { v: 1 }, { update: { _index: 'waves', _id: 'a' } }, { doc: { w: 2 } }, { index: { _index: 'waves', _id: 'b' } }, { v: 1 }, { delete: { _index: 'waves', _id: 'a' } }]),
      NDJSON,
    );
    expect(answer.status).toBe(200);
    expect((answer.json.items as Record<string, { status: number }>[]).map((item) => Object.entries(item).map(([key, value]) => `${key} ${value.status}`)[0])).toEqual([
      'index 201',
      'update 200',
      'index 201',
      'delete 200',
    ]);
    const bulks = stack.standIn.requests.filter((request) => request.url.startsWith('/_bulk'));
    expect(bulks.map((request) => request.body.toString().split('\n').filter((line) => line.includes('_id')).length)).toEqual([2, 1, 1]);
    expect(stack.standIn.document('waves', 'a')).toBeUndefined();
    expect(stack.standIn.history('waves', 'a').map((write) => write.result)).toEqual(['created', 'updated', 'deleted']);
  });

  it('writes the fence in place of a null metadata value, which Elasticsearch takes as absent, never beside it', async () => {
    for (const id of ['a', 'c', 'd']) expect((await send(url, 'PUT', `/nulls/_doc/${id}`, { v: 0 })).status).toBe(201);
    stack.standIn.resetLog();
    const lines = [
      '{"index":{"_index":"nulls","_id":"a","if_seq_no":null,"if_primary_term":null}}',
      '{"v":1}',
      '{"index":{"_index":"nulls","_id":"b","op_type":null}}',
      '{"v":1}',
      '{"index":{"_index":"nulls","_id":"c","version":null,"version_type":null,"routing":null,"if_seq_no":null}}',
      '{"v":1}',
      '{"update":{"_index":"nulls","_id":"d","if_primary_term":null,"retry_on_conflict":null}}',
      '{"doc":{"w":1}}',
    ];
    const answer = await send(url, 'POST', '/_bulk', `${lines.join('\n')}\n`, NDJSON);
    expect(answer.status).toBe(200);
    expect((answer.json.items as Record<string, { status: number }>[]).map((item) => Object.entries(item).map(([key, value]) => `${key} ${value.status}`)[0])).toEqual([
      'index 200',
      'index 201',
      'index 200',
      'update 200',
    ]);
    expect(['a', 'b', 'c', 'd'].map((id) => stack.standIn.document('nulls', id)?.source)).toEqual([{ v: 1 }, { v: 1 }, { v: 1 }, { v: 0, w: 1 }]);
    const sent = stack.standIn.requests.filter((request) => request.url.startsWith('/_bulk')).flatMap((request) => request.body.toString().split('\n').filter((line) => line.includes('"_id"')));
    expect(sent.map((line) => line.replace(/"if_seq_no":\d+/, '"if_seq_no":S'))).toEqual([
      '{"index":{"_index":"nulls","_id":"a","if_seq_no":S,"if_primary_term":1}}',
      '{"index":{"_index":"nulls","_id":"b","op_type":"create"}}',
      '{"index":{"if_primary_term":1,"_index":"nulls","_id":"c","version":null,"version_type":null,"routing":null,"if_seq_no":S}}',
      '{"update":{"if_seq_no":S,"_index":"nulls","_id":"d","if_primary_term":1,"retry_on_conflict":null}}',
    ]);
  });

  it('fences a bulk index whose op_type is not exactly "create": Elasticsearch indexes it', async () => {
    expect((await send(url, 'PUT', '/optype/_doc/x', { v: 0 })).status).toBe(201);
    stack.standIn.resetLog();
    const answer = await send(url, 'POST', '/_bulk', '{"index":{"_index":"optype","_id":"x","op_type":"CREATE"}}\n{"v":1}\n', NDJSON);
    expect(answer.json.items).toMatchObject([{ index: { status: 200, result: 'updated' } }]);
    expect(stack.standIn.document('optype', 'x')?.source).toEqual({ v: 1 });
    const sent = stack.standIn.requests.filter((request) => request.url.startsWith('/_bulk')).map((request) => request.body.toString());
    expect(sent).toEqual([expect.stringMatching(/^\{"index":\{"if_seq_no":\d+,"if_primary_term":1,"_index":"optype","_id":"x","op_type":"CREATE"\}\}\n/)]);
  });

  it('a later wave Elasticsearch refuses as a whole answers its items, and the waves after it, with the refusal', async () => {
    stack.standIn.resetLog();
    const error = { type: 'es_rejected_execution_exception', reason: 'rejected execution of coordinating operation' };
    let bulks = 0;
    const refuse = stack.standIn.onRequest((request, res) => {
      if (!request.url.startsWith('/_bulk') || ++bulks !== 2) return false;
      res.writeHead(429, { 'content-type': 'application/json', 'X-elastic-product': 'Elasticsearch' });
      res.end(JSON.stringify({ error: { root_cause: [error], ...error }, status: 429 }));
      return true;
    });
    try {
      const item = { index: { _index: 'wave-refused', _id: 'a' } };
      const answer = await send(url, 'POST', '/_bulk', ndjson([item, { v: 1 }, item, { v: 2 }, item, { v: 3 }]), NDJSON);
      expect(answer.status).toBe(200);
      // The third item is not sent after the second was refused: retried after it, it lands after it, as the client ordered.
      expect(answer.json.items).toEqual([
        { index: expect.objectContaining({ _id: 'a', status: 201 }) },
        { index: { _index: 'wave-refused', _id: 'a', status: 429, error } },
        { index: { _index: 'wave-refused', _id: 'a', status: 429, error } },
      ]);
    } finally {
      refuse();
    }
    expect(bulks).toBe(2);
    expect(stack.standIn.document('wave-refused', 'a')?.source).toEqual({ v: 1 });
  });

  it('holds back the later items of a document whose item Elasticsearch rejected with 429, as its shard would have', async () => {
    stack.standIn.resetLog();
    const error = { type: 'es_rejected_execution_exception', reason: 'rejected execution of primary operation' };
    let bulks = 0;
    // The second wave carries a's second item and b's: the cluster rejects a's shard only.
    const reject = stack.standIn.onRequest((request, res) => {
      if (!request.url.startsWith('/_bulk') || ++bulks !== 2) return false;
      const items = request.body.toString().split('\n').filter((line) => line.includes('"_id"')).map((line) => {
        const id = (Object.values(JSON.parse(line) as Record<string, { _id: string }>)[0]!)._id;
        return id === 'a' ? { index: { _index: 'wave-429', _id: 'a', status: 429, error } } : { index: { _index: 'wave-429', _id: id, _version: 2, result: 'updated', status: 200 } };
      });
      res.writeHead(200, { 'content-type': 'application/json', 'X-elastic-product': 'Elasticsearch' });
      res.end(JSON.stringify({ took: 1, errors: true, items }));
      return true;
    });
    try {
      const a = { index: { _index: 'wave-429', _id: 'a' } };
      const b = { index: { _index: 'wave-429', _id: 'b' } };
      const answer = await send(url, 'POST', '/_bulk', ndjson([a, { v: 1 }, b, { v: 1 }, a, { v: 2 }, b, { v: 2 }, a, { v: 3 }]), NDJSON);
      expect((answer.json.items as Record<string, { status: number }>[]).map((item) => item.index!.status)).toEqual([201, 201, 429, 200, 429]);
      expect((answer.json.items as Record<string, { error?: unknown }>[])[4]!.index!.error).toEqual(error);
    } finally {
      reject();
    }
    // a's third item was not sent: retried after its second, it lands after it, as the client ordered.
    expect(bulks).toBe(2);
    expect(stack.standIn.document('wave-429', 'a')?.source).toEqual({ v: 1 });
  });

  it('reads through an alias at its write index', async () => {
    stack.standIn.defineAlias('rolled', 'rolled-000002', ['rolled-000001']);
    stack.standIn.resetLog();
    expect((await send(url, 'PUT', '/rolled/_doc/1', { v: 1 })).status).toBe(201);
    expect(stack.standIn.requests.filter((request) => request.method === 'GET' && request.url.includes('/_doc/')).map((request) => request.url)).toEqual([
      '/rolled-000002/_doc/1?realtime=true&_source=false',
    ]);
  });
});
