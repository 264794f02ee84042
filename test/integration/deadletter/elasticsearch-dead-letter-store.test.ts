import { Client } from '@elastic/elasticsearch';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ElasticsearchDeadLetterStore, type ElasticsearchDeadLetterStoreOptions } from '../../../src/deadletter/elasticsearch-dead-letter-store.js';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { deadLetterRecord } from './dead-letter-fixtures.js';

const INDEX = 'proxy-dead-letters';
const T0 = Date.UTC(2026, 10, 21, 10, 0, 0);
const at = (seconds: number): Date => new Date(T0 + seconds * 1000);

describe('ElasticsearchDeadLetterStore (official client, stand-in over HTTP)', () => {
  let standIn: EsStandIn;
  let client: Client;
  const store = (options: ElasticsearchDeadLetterStoreOptions = {}): ElasticsearchDeadLetterStore =>
    new ElasticsearchDeadLetterStore(client, INDEX, { requestTimeoutMs: 2000, ...options });

  beforeEach(async () => {
    standIn = await startEsStandIn();
    client = new Client({ node: standIn.url, maxRetries: 0 });
  });

  afterEach(async () => {
    await client.close();
    await standIn.stop();
  });

  it('creates the index with its mapping once, then creates each record by id and waits for a refresh', async () => {
    const queue = store();
    const first = deadLetterRecord('a', at(1));
    const second = deadLetterRecord('b', at(2));
    await queue.append(first);
    await queue.append(second);

    const creates = standIn.requests.filter((r) => r.method === 'PUT' && r.url.split('?')[0] === `/${INDEX}`);
    expect(creates).toHaveLength(1);
    const mapping: unknown = JSON.parse(creates[0]!.body.toString());
    expect(mapping).toMatchObject({
      mappings: {
        dynamic: false,
        properties: { id: { type: 'keyword' }, createdAt: { type: 'date' }, priority: { type: 'keyword' }, body: { enabled: false }, headers: { enabled: false } },
      },
    });
    const writes = standIn.requests.filter((r) => r.url.startsWith(`/${INDEX}/_create/`));
    expect(writes.map((r) => r.url)).toEqual([`/${INDEX}/_create/${first.id}?refresh=wait_for`, `/${INDEX}/_create/${second.id}?refresh=wait_for`]);
    expect(standIn.document(INDEX, first.id)?.source).toEqual(first);
  });

  it('round-trips records: list oldest first, get by id, unknown id is null', async () => {
    const queue = store();
    const records = [deadLetterRecord('late', at(3)), deadLetterRecord('early', at(1)), deadLetterRecord('middle', at(2))];
    for (const record of records) await queue.append(record);

    const listing = await queue.list();
    expect(listing.records.map((record) => record.keys[0]?.id)).toEqual(['early', 'middle', 'late']);
    expect(listing.records[0]).toEqual(records[1]);
    expect(listing.corruptLines).toEqual([]);
    expect(listing.truncated).toBeUndefined();
    expect(await queue.get(records[0]!.id)).toEqual(records[0]);
    expect(await queue.get('dlq-unknown')).toBeNull();
  });

  it('marks a record replayed: hidden from the default listing, shown with includeReplayed', async () => {
    const queue = store();
    const kept = deadLetterRecord('kept', at(1));
    const replayed = deadLetterRecord('replayed', at(2));
    await queue.append(kept);
    await queue.append(replayed);

    expect(await queue.markReplayed(replayed.id, '200', at(10))).toBe(true);
    expect(await queue.markReplayed('dlq-unknown', '200')).toBe(false);

    expect((await queue.list()).records.map((record) => record.id)).toEqual([kept.id]);
    const all = await queue.list({ includeReplayed: true });
    expect(all.records.map((record) => [record.id, record.replayedAt, record.replayStatus])).toEqual([
      [kept.id, null, null],
      [replayed.id, at(10).toISOString(), '200'],
    ]);
    expect(await queue.get(replayed.id)).toMatchObject({ replayedAt: at(10).toISOString(), replayStatus: '200' });
  });

  it('reads a missing index as an empty queue, without creating it', async () => {
    const queue = store();
    expect(await queue.list()).toEqual({ records: [], corruptLines: [] });
    expect(await queue.get('dlq-anything')).toBeNull();
    expect(standIn.requests.some((r) => r.method === 'PUT')).toBe(false);

    // A cluster answering 404 index_not_found (no ignore_unavailable honoured) reads the same way.
    standIn.onRequest((request, res) => {
      if (request.segments[1] !== '_search') return false;
      res.writeHead(404, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
      res.end(JSON.stringify({ error: { type: 'index_not_found_exception', reason: `no such index [${INDEX}]` }, status: 404 }));
      return true;
    });
    expect(await queue.list({ includeReplayed: true })).toEqual({ records: [], corruptLines: [] });
  });

  it('pages with search_after and stops at its bound, saying the listing is truncated', async () => {
    const queue = store({ pageSize: 2, maxListed: 5 });
    const records = Array.from({ length: 7 }, (_, n) => deadLetterRecord(`doc-${n}`, at(n)));
    for (const record of records) await queue.append(record);

    const listing = await queue.list();
    expect(listing.records.map((record) => record.id)).toEqual(records.slice(0, 5).map((record) => record.id));
    expect(listing.truncated).toBe(true);
    const searches = standIn.requests.filter((r) => r.url.startsWith(`/${INDEX}/_search`));
    expect(searches.filter((r) => r.body.toString().includes('search_after')).length).toBeGreaterThanOrEqual(2);

    await queue.markReplayed(records[0]!.id, '200');
    await queue.markReplayed(records[1]!.id, '200');
    const rest = await queue.list();
    expect(rest.records.map((record) => record.id)).toEqual(records.slice(2).map((record) => record.id));
    expect(rest.truncated).toBeUndefined();
  });

  it('orders records of the same millisecond by id', async () => {
    const queue = store({ pageSize: 1 });
    const same = at(5);
    const records = [deadLetterRecord('x', same), deadLetterRecord('y', same), deadLetterRecord('z', same)];
    for (const record of [records[2]!, records[0]!, records[1]!]) await queue.append(record);
    expect((await queue.list()).records.map((record) => record.id)).toEqual(records.map((record) => record.id).sort());
  });

  it('shares the index between instances and tolerates the other instance creating it, or a repeated append', async () => {
    const first = store();
    const second = store();
    const a = deadLetterRecord('a', at(1));
    const b = deadLetterRecord('b', at(2));
    await first.append(a);
    await second.append(b);
    await second.append(b);
    expect((await first.list()).records.map((record) => record.id)).toEqual([a.id, b.id]);
    expect(await first.knownIds([a.id, 'dlq-unknown', b.id])).toEqual(new Set([a.id, b.id]));
  });

  it('reports a document that is not a record as a corrupt entry and lists the rest', async () => {
    const queue = store();
    const good = deadLetterRecord('good', at(2));
    await queue.append(good);
    await client.index({ index: INDEX, id: 'junk', document: { id: 'junk', createdAt: at(1).toISOString() } });
    const listing = await queue.list();
    expect(listing.records.map((record) => record.id)).toEqual([good.id]);
    expect(listing.corruptLines).toEqual([{ file: `${INDEX}/_doc/junk`, line: 1, reason: expect.stringContaining('field [method]') }]);
  });

  it('fails with DEAD_LETTER_INDEX_FAILED when the cluster cannot be reached', async () => {
    const queue = store();
    await standIn.refuseConnections();
    const appended = queue.append(deadLetterRecord('a'));
    await expect(appended).rejects.toBeInstanceOf(ProxyError);
    await expect(appended).rejects.toMatchObject({ code: 'DEAD_LETTER_INDEX_FAILED' });
    await expect(queue.list()).rejects.toMatchObject({ code: 'DEAD_LETTER_INDEX_FAILED' });
    await expect(queue.get('dlq-x')).rejects.toMatchObject({ code: 'DEAD_LETTER_INDEX_FAILED' });

    // Once it is back, the index is created and the append goes through (the failed creation is not cached).
    await standIn.acceptConnections();
    await queue.append(deadLetterRecord('b'));
    expect((await queue.list()).records).toHaveLength(1);
  });
});
