import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { jsonOf, rawRequest } from '../../support/http-request.js';

/**
 * The stand-in as the serialization oracle, with writes sent straight to it (no proxy): a write
 * is applied at the end of its delay, its application interval is [arrived, applied], writes to
 * one document whose intervals intersect overlap, and every document keeps the order its writes
 * were applied in, so a stale write that lands late shows in the history and the final content.
 */
describe('Elasticsearch stand-in: the serialization oracle', () => {
  let standIn: EsStandIn;
  beforeEach(async () => {
    standIn = await startEsStandIn({ writeLatencyMs: 40 });
  });
  afterEach(async () => {
    await standIn.stop();
  });

  const put = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    rawRequest(standIn.url, { method: 'PUT', path, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const get = async (path: string): Promise<unknown> => jsonOf(await rawRequest(standIn.url, { path }));

  it('counts writes with overlapping delays as overlaps on their application intervals', async () => {
    const gate = standIn.gateDocument('o', '1');
    const writes = Promise.all([1, 2, 3].map((n) => put('/o/_doc/1', { n })));
    await gate.arrived(3);
    gate.release();
    await writes;
    // Three writes in flight together: three intersecting pairs.
    expect(standIn.overlaps.count).toBe(3);
    expect(standIn.maxConcurrentPerDocument).toBe(3);
    const overlaps = standIn.appliedOverlaps();
    expect(overlaps).toHaveLength(3);
    for (const { key, first, second } of overlaps) {
      expect(key).toBe('o/1');
      expect(first.request.id).not.toBe(second.request.id);
      expect(first.order).toBeLessThan(second.order);
      // Intersecting: the later-applied write arrived before the earlier one was applied.
      expect(second.arrivedTick).toBeLessThan(first.appliedTick);
      expect(second.arrivedAt).toBeLessThanOrEqual(first.appliedAt);
    }
    expect(standIn.history('o', '1').map((write) => write.seqNo)).toEqual([0, 1, 2]);
  });

  it('sees no overlap between sequential writes: each interval starts after the previous one ended', async () => {
    for (const n of [1, 2, 3]) await put('/o/_doc/seq', { n });
    await Promise.all([1, 2, 3].map((n) => put(`/o/_doc/other-${n}`, { n })));
    expect(standIn.overlaps.count).toBe(0);
    expect(standIn.appliedOverlaps()).toEqual([]);
    expect(standIn.maxConcurrentPerDocument).toBe(1);
    const history = standIn.history('o', 'seq');
    expect(history.map((write) => [write.body, write.result, write.version])).toEqual([
      [{ n: 1 }, 'created', 1],
      [{ n: 2 }, 'updated', 2],
      [{ n: 3 }, 'updated', 3],
    ]);
    for (let n = 1; n < history.length; n += 1) expect(history[n]?.arrivedTick).toBeGreaterThan(history[n - 1]?.appliedTick ?? Infinity);
  });

  it('applies a write at the end of its delay: until then a realtime GET sees the previous revision', async () => {
    await put('/o/_doc/g', { n: 0 });
    const gate = standIn.gateDocument('o', 'g');
    const held = put('/o/_doc/g', { n: 1 });
    await gate.arrived(1);
    expect(await get('/o/_doc/g')).toMatchObject({ _seq_no: 0, _version: 1, _source: { n: 0 } });
    expect(standIn.pendingWrites()).toEqual([{ key: 'o/g', requestId: expect.any(Number), label: 'PUT /o/_doc/g', arrivedAt: expect.any(Number) }]);
    expect(standIn.writesInFlight).toBe(1);
    gate.release();
    expect((await held).status).toBe(200);
    expect(await get('/o/_doc/g')).toMatchObject({ _seq_no: 1, _version: 2, _source: { n: 1 } });
    expect(standIn.pendingWrites()).toEqual([]);
  });

  it('shows a stale write that lands late, after its client hung up, in the applied order and the final content', async () => {
    await put('/o/_doc/s', { writer: 'initial' });
    const gate = standIn.gate((request) => request.headers['x-writer'] === 'stale');
    const client = new AbortController();
    const stale = fetch(`${standIn.url}/o/_doc/s`, {
      method: 'PUT',
      body: JSON.stringify({ writer: 'stale' }),
      headers: { 'content-type': 'application/json', 'x-writer': 'stale', 'x-opaque-id': 'stale-1' },
      signal: client.signal,
    }).catch(() => 'hung up');
    await gate.arrived(1);
    client.abort();
    expect(await stale).toBe('hung up');

    expect((await put('/o/_doc/s', { writer: 'fresh' })).status).toBe(200);
    expect(standIn.overlaps.count).toBe(1);
    gate.release();
    const late = await standIn.waitForApplied((write) => write.request.opaqueId === 'stale-1');

    expect(standIn.history('o', 's').map((write) => [write.body, write.status, write.result, write.seqNo])).toEqual([
      [{ writer: 'initial' }, 201, 'created', 0],
      [{ writer: 'fresh' }, 200, 'updated', 1],
      [{ writer: 'stale' }, 200, 'updated', 2],
    ]);
    expect(standIn.document('o', 's')?.source).toEqual({ writer: 'stale' });
    const logged = standIn.requests.find((request) => request.headers['x-opaque-id'] === 'stale-1');
    expect(late).toMatchObject({ key: 'o/s', index: 'o', id: 's', item: null, action: 'index', request: { id: logged?.id, method: 'PUT', url: '/o/_doc/s', opaqueId: 'stale-1' } });
    expect(standIn.appliedOverlaps()).toEqual([{ key: 'o/s', first: expect.objectContaining({ body: { writer: 'fresh' } }), second: late }]);
  });

  it('answers the same stale write 409 when it carries the if_seq_no it read: the document keeps the fresh content', async () => {
    await put('/o/_doc/f', { writer: 'initial' });
    const gate = standIn.gate((request) => request.headers['x-writer'] === 'stale');
    const stale = put('/o/_doc/f?if_seq_no=0&if_primary_term=1', { writer: 'stale' }, { 'x-writer': 'stale' });
    await gate.arrived(1);
    expect((await put('/o/_doc/f', { writer: 'fresh' })).status).toBe(200);
    gate.release();
    const refused = await stale;
    expect(refused.status).toBe(409);
    expect(jsonOf(refused)).toMatchObject({
      error: { type: 'version_conflict_engine_exception', reason: '[f]: version conflict, required seqNo [0], primary term [1]. current document has seqNo [1] and primary term [1]' },
      status: 409,
    });
    expect(standIn.history('o', 'f').map((write) => [write.body, write.status, write.error])).toEqual([
      [{ writer: 'initial' }, 201, null],
      [{ writer: 'fresh' }, 200, null],
      [{ writer: 'stale' }, 409, 'version_conflict_engine_exception'],
    ]);
    expect(standIn.document('o', 'f')).toMatchObject({ source: { writer: 'fresh' }, seqNo: 1, version: 2 });
    // Both were inside the cluster at once: still an overlap, one that did no harm.
    expect(standIn.appliedOverlaps()).toHaveLength(1);
  });

  it('applies a bulk item by item at one instant, and counts its overlap with a single write to one of its documents', async () => {
    const gate = standIn.gate((request) => request.url === '/_bulk');
    const lines = [{ index: { _index: 'o', _id: 'b1' } }, { n: 1 }, { index: { _index: 'o', _id: 'b2' } }, { n: 1 }, { update: { _index: 'o', _id: 'b1' } }, { doc: { m: 1 } }];
    const bulk = rawRequest(standIn.url, { method: 'POST', path: '/_bulk', headers: { 'content-type': 'application/x-ndjson' }, body: lines.map((line) => JSON.stringify(line)).join('\n') + '\n' });
    await gate.arrived(1);
    expect((await put('/o/_doc/b2', { n: 'single' })).status).toBe(201);
    gate.release();
    expect((await bulk).status).toBe(200);

    const b1 = standIn.history('o', 'b1');
    expect(b1.map((write) => [write.item, write.action, write.body, write.result])).toEqual([
      [0, 'index', { n: 1 }, 'created'],
      [2, 'update', { doc: { m: 1 } }, 'updated'],
    ]);
    const b2 = standIn.history('o', 'b2');
    expect(b2.map((write) => [write.item, write.body])).toEqual([
      [null, { n: 'single' }],
      [1, { n: 1 }],
    ]);
    const items = [b1[0], b2[1], b1[1]];
    expect(items.map((write) => write?.order)).toEqual([b1[0]?.order, (b1[0]?.order ?? 0) + 1, (b1[0]?.order ?? 0) + 2]);
    expect(new Set(items.map((write) => write?.appliedTick)).size).toBe(1);
    expect(standIn.document('o', 'b1')?.source).toEqual({ n: 1, m: 1 });
    expect(standIn.document('o', 'b2')?.source).toEqual({ n: 1 });
    expect(standIn.overlaps.count).toBe(1);
    expect(standIn.appliedOverlaps().map((overlap) => [overlap.key, overlap.first.item, overlap.second.item])).toEqual([['o/b2', null, 1]]);
  });

  it('keeps requests refused before any shard out of the history and out of flight', async () => {
    const refused = await Promise.all([put('/o/_doc/v?version=1', { n: 1 }), put('/o/_doc/v?if_seq_no=1', { n: 1 }), put('/o/_doc/v?op_type=bogus', { n: 1 })]);
    expect(refused.map((response) => response.status)).toEqual([400, 400, 400]);
    expect(standIn.history('o', 'v')).toEqual([]);
    expect(standIn.overlaps.count).toBe(0);
  });

  it('resetLog clears the log, the counters and the histories; documents stay, a write in flight still counts', async () => {
    await put('/o/_doc/r', { n: 0 });
    const gate = standIn.gate((request) => request.headers['x-writer'] === 'held');
    const held = put('/o/_doc/r', { n: 'held' }, { 'x-writer': 'held' });
    await gate.arrived(1);
    standIn.resetLog();
    expect(standIn.requests).toEqual([]);
    expect(standIn.history('o', 'r')).toEqual([]);
    expect(standIn.document('o', 'r')?.source).toEqual({ n: 0 });

    expect((await put('/o/_doc/r', { n: 'next' })).status).toBe(200);
    expect(standIn.overlaps.count).toBe(1);
    gate.release();
    await held;
    expect(standIn.history('o', 'r').map((write) => write.body)).toEqual([{ n: 'next' }, { n: 'held' }]);
    expect(standIn.appliedOverlaps()).toHaveLength(1);
  });
});
