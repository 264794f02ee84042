import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ndjson, send } from './write-client.js';

/** `yyyy.MM` of now in UTC: a monthly date-math name changes only at a month's turn. */
function thisMonth(): string {
  const now = new Date();
  return `${now.getUTCFullYear()}.${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
}

describe.each(LOCK_BACKENDS)('which document a write names: aliases and date math ($name locks)', (locks) => {
  let stack: WriteStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  async function twoProxies(): Promise<WriteStack> {
    return startWriteStack({ ...locks.stackLocks(), proxies: 2, standIn: { writeLatencyMs: 3 }, settings: { lock: { foregroundTimeoutMs: 20_000 } } });
  }

  it('a direct write to an index with a write alias and a read alias (listed `{}`) waits for writes through the write alias', async () => {
    stack = await twoProxies();
    stack.standIn.defineAlias('logs', 'logs-000001');
    stack.standIn.defineUnflaggedAlias('all-logs', ['logs-000001', 'logs-old']);
    const writes = Array.from({ length: 40 }, (_, n) => send(stack!.urls[n % 2]!, 'PUT', `/${n % 4 < 2 ? 'logs' : 'logs-000001'}/_doc/1`, { n }));
    const answers = await Promise.all(writes);
    expect(answers.map((answer) => answer.status).every((status) => status === 200 || status === 201)).toBe(true);
    expect(stack.standIn.overlaps.count).toBe(0);
    const applied = stack.standIn.history('logs-000001', '1');
    expect(applied).toHaveLength(40);
    expect(stack.standIn.document('logs-000001', '1')?.source).toEqual(applied.at(-1)?.body);
  });

  it('direct writes to the previous write index stay serialized across proxies whose caches disagree after a rollover', async () => {
    stack = await twoProxies();
    stack.standIn.defineAlias('logs', 'logs-000001');
    // Proxy 0 looks logs-000001 up while it is the write index and keeps that answer for the TTL.
    expect((await send(stack.urls[0]!, 'PUT', '/logs-000001/_doc/warm', { v: 0 })).status).toBe(201);
    // Rollover: logs-000001 stays behind the alias with `is_write_index: false`; proxy 1 sees only that.
    stack.standIn.defineAlias('logs', 'logs-000002', ['logs-000001']);
    const writes = Array.from({ length: 40 }, (_, n) => send(stack!.urls[n % 2]!, 'PUT', '/logs-000001/_doc/7', { n }));
    const answers = await Promise.all(writes);
    expect(answers.map((answer) => answer.status).every((status) => status === 200 || status === 201)).toBe(true);
    expect(stack.standIn.overlaps.count).toBe(0);
    const applied = stack.standIn.history('logs-000001', '7');
    expect(applied).toHaveLength(40);
    expect(stack.standIn.document('logs-000001', '7')?.source).toEqual(applied.at(-1)?.body);
  });

  it('a create through a data stream and a direct write to its backing index lock the same document', async () => {
    stack = await twoProxies();
    const backing = stack.standIn.defineDataStream('events');
    const writes = Array.from({ length: 40 }, (_, n) =>
      n % 2 === 0
        ? send(stack!.urls[n % 2]!, 'PUT', `/events/_create/${n % 4 === 0 ? 'a' : 'b'}`, { '@timestamp': '2024-01-01T00:00:00Z', n })
        : send(stack!.urls[n % 2]!, 'PUT', `/${backing}/_doc/${n % 4 === 1 ? 'a' : 'b'}`, { '@timestamp': '2024-01-01T00:00:00Z', n }),
    );
    await Promise.all(writes);
    expect(stack.standIn.overlaps.count).toBe(0);
    expect(stack.standIn.history(backing, 'a')).toHaveLength(20);
  });

  it('a date-math name and the concrete name it resolves to lock the same document, for single writes and a bulk’s `_index`', async () => {
    stack = await twoProxies();
    const concrete = `metrics-${thisMonth()}`;
    const dateMath = encodeURIComponent('<metrics-{now/M{yyyy.MM}}>');
    const writes = Array.from({ length: 40 }, (_, n) => {
      const url = stack!.urls[n % 2]!;
      switch (n % 4) {
        case 0:
          return send(url, 'PUT', `/${dateMath}/_doc/1`, { n });
        case 1:
          return send(url, 'PUT', `/${concrete}/_doc/1`, { n });
        case 2:
          return send(url, 'POST', '/_bulk', ndjson([{ index: { _index: '<metrics-{now/M{yyyy.MM}}>', _id: '1' } }, { n }]), { 'content-type': 'application/x-ndjson' });
        default:
          return send(url, 'POST', `/${dateMath}/_bulk`, ndjson([{ index: { _id: '1' } }, { n }]), { 'content-type': 'application/x-ndjson' });
      }
    });
    const answers = await Promise.all(writes);
    expect(answers.map((answer) => answer.status).every((status) => status === 200 || status === 201)).toBe(true);
    expect(stack.standIn.overlaps.count).toBe(0);
    const applied = stack.standIn.history(concrete, '1');
    expect(applied).toHaveLength(40);
    expect(stack.standIn.document(concrete, '1')?.source).toEqual(applied.at(-1)?.body);
  });

  it('a date-math name Elasticsearch refuses is answered 400 `parse_exception` with nothing locked or written', async () => {
    stack = await twoProxies();
    const answer = await send(stack.urls[0]!, 'PUT', `/${encodeURIComponent('<metrics-{now/M>')}/_doc/1`, { n: 1 });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ status: 400, error: { type: 'parse_exception', reason: expect.stringContaining('date math placeholder is open ended') } });
    expect(stack.standIn.requests.filter((request) => request.url.includes('_doc'))).toHaveLength(0);
  });

  it('a bulk item with a date-math `_index` Elasticsearch refuses fails alone, as Elasticsearch fails it; the others are written', async () => {
    stack = await twoProxies();
    const body = ndjson([{ index: { _index: '<metrics-{now/M>', _id: '1' } }, { n: 1 }, { index: { _index: '<metrics-{now/M{yyyy.MM}}>', _id: '2' } }, { n: 2 }]);
    const answer = await send(stack.urls[0]!, 'POST', '/_bulk', body, { 'content-type': 'application/x-ndjson' });
    expect(answer.status).toBe(200);
    const items = answer.json.items as { index: { status: number; error?: { type: string } } }[];
    expect(items[0]?.index).toMatchObject({ status: 400, error: { type: 'parse_exception' } });
    expect(items[1]?.index.status).toBe(201);
    expect(stack.standIn.document(`metrics-${thisMonth()}`, '2')?.source).toEqual({ n: 2 });
  });

  it('a write through an alias with no write index is refused by Elasticsearch and writes nothing', async () => {
    stack = await twoProxies();
    stack.standIn.defineUnflaggedAlias('all-logs', ['logs-a', 'logs-b']);
    const answer = await send(stack.urls[0]!, 'PUT', '/all-logs/_doc/1', { n: 1 });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: { type: 'illegal_argument_exception', reason: expect.stringContaining('no write index is defined for alias [all-logs]') } });
    expect(stack.standIn.documents('logs-a').size + stack.standIn.documents('logs-b').size).toBe(0);
  });
});
