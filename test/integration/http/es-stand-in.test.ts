import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { jsonOf, rawRequest } from '../../support/http-request.js';

describe('Elasticsearch stand-in', () => {
  let standIn: EsStandIn;
  beforeEach(async () => {
    standIn = await startEsStandIn({ writeLatencyMs: 30 });
  });
  afterEach(async () => {
    await standIn.stop();
  });

  const put = (path: string, body: unknown, method = 'PUT') =>
    rawRequest(standIn.url, { method, path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('detects overlapping writes when clients write to one document concurrently', async () => {
    await Promise.all(Array.from({ length: 5 }, (_, i) => put('/products/_doc/42', { n: i })));
    expect(standIn.overlaps.count).toBeGreaterThan(0);
    expect(standIn.maxConcurrentPerDocument).toBeGreaterThan(1);
    expect(standIn.overlaps.examples[0]?.key).toBe('products/42');
  });

  it('sees no overlap when writes to one document are sequential, or concurrent on distinct documents', async () => {
    for (let i = 0; i < 3; i += 1) await put('/products/_doc/1', { n: i });
    await Promise.all(Array.from({ length: 5 }, (_, i) => put(`/products/_doc/d${i}`, { n: i })));
    expect(standIn.overlaps.count).toBe(0);
    expect(standIn.maxConcurrentPerDocument).toBe(1);
  });

  it('counts a bulk item and a single write to the same document as an overlap, through an alias too', async () => {
    standIn.defineAlias('products-write', 'products-v2');
    const gate = standIn.gateDocument('products-v2', '7');
    const single = put('/products-v2/_doc/7', { a: 1 });
    await gate.arrived(1);
    const bulkBody = '{"index":{"_index":"products-write","_id":"7"}}\n{"a":2}\n';
    const bulk = rawRequest(standIn.url, { method: 'POST', path: '/_bulk', headers: { 'content-type': 'application/x-ndjson' }, body: bulkBody });
    await gate.arrived(2);
    gate.release();
    await Promise.all([single, bulk]);
    expect(standIn.overlaps.count).toBe(1);
  });

  it('answers document APIs in Elasticsearch shapes', async () => {
    const created = await put('/products/_doc/1', { name: 'a', tags: { x: 1 } });
    expect(created.status).toBe(201);
    expect(created.headers['x-elastic-product']).toBe('Elasticsearch');
    expect(jsonOf(created)).toMatchObject({ _index: 'products', _id: '1', _version: 1, result: 'created', _seq_no: 0, _primary_term: 1 });

    const conflict = await put('/products/_create/1', { name: 'b' });
    expect(conflict.status).toBe(409);
    expect(jsonOf(conflict)).toMatchObject({ error: { type: 'version_conflict_engine_exception' }, status: 409 });

    const updated = await put('/products/_update/1', { doc: { tags: { y: 2 } } }, 'POST');
    expect(jsonOf(updated)).toMatchObject({ result: 'updated', _version: 2 });
    expect(standIn.document('products', '1')?.source).toEqual({ name: 'a', tags: { x: 1, y: 2 } });

    const missing = await put('/products/_update/nope', { doc: { a: 1 } }, 'POST');
    expect(missing.status).toBe(404);
    expect(jsonOf(missing)).toMatchObject({ error: { type: 'document_missing_exception' } });
    const upserted = await put('/products/_update/nope', { doc: { a: 1 }, doc_as_upsert: true }, 'POST');
    expect(jsonOf(upserted)).toMatchObject({ result: 'created' });

    const autoId = await put('/products/_doc', { auto: true }, 'POST');
    expect(autoId.status).toBe(201);

    const typed = await rawRequest(standIn.url, {
      method: 'PUT',
      path: '/products/legacy/9',
      headers: { 'content-type': 'application/vnd.elasticsearch+json;compatible-with=7' },
      body: JSON.stringify({ t: 1 }),
    });
    expect(jsonOf(typed)).toMatchObject({ _type: 'legacy', _id: '9', result: 'created' });
    // Elasticsearch 8 serves typed routes only in REST compatibility mode.
    const untyped = await put('/products/legacy/10', { t: 1 });
    expect(untyped.status).toBe(400);

    const got = await rawRequest(standIn.url, { path: '/products/_doc/1' });
    expect(jsonOf(got)).toMatchObject({ found: true, _source: { name: 'a' } });

    const deleted = await rawRequest(standIn.url, { method: 'DELETE', path: '/products/_doc/1' });
    expect(jsonOf(deleted)).toMatchObject({ result: 'deleted', _version: 3 });
    const gone = await rawRequest(standIn.url, { path: '/products/_doc/1' });
    expect(gone.status).toBe(404);
  });

  it('answers bulk item by item, in order, with the errors flag', async () => {
    await put('/products/_doc/1', { a: 1 });
    const body = [
      '{"create":{"_id":"1"}}',
      '{"a":2}',
      '{"index":{"_id":"2"}}',
      '{"a":3}',
      '{"delete":{"_id":"3"}}',
      '{"update":{"_id":"2"}}',
      '{"doc":{"b":1}}',
      '',
    ].join('\n');
    const response = await rawRequest(standIn.url, { method: 'POST', path: '/products/_bulk', headers: { 'content-type': 'application/x-ndjson' }, body });
    expect(response.status).toBe(200);
    expect(jsonOf(response)).toMatchObject({
      errors: true,
      items: [
        { create: { _id: '1', status: 409, error: { type: 'version_conflict_engine_exception' } } },
        { index: { _id: '2', status: 201, result: 'created' } },
        { delete: { _id: '3', status: 404, result: 'not_found' } },
        { update: { _id: '2', status: 200, result: 'updated' } },
      ],
    });
  });

  it('resolves aliases and finds documents with _search', async () => {
    standIn.defineAlias('current', 'products-v1');
    await put('/current/_doc/1', { color: 'red' });
    await put('/current/_doc/2', { color: 'blue' });
    const alias = await rawRequest(standIn.url, { path: '/_alias/current' });
    expect(jsonOf(alias)).toEqual({ 'products-v1': { aliases: { current: { is_write_index: true } } } });
    const search = await put('/current/_search', { query: { term: { color: 'red' } } }, 'POST');
    expect(jsonOf(search)).toMatchObject({ hits: { total: { value: 1 }, hits: [{ _index: 'products-v1', _id: '1' }] } });
  });

  it('empties only the indices past a document limit, and still counts an overlap with a write in flight then', async () => {
    await Promise.all(['a', 'b', 'c'].map((id) => put(`/big/_doc/${id}`, { id })));
    await put('/small/_doc/kept', { id: 'kept' });
    const gate = standIn.gateDocument('big', 'a');
    const inFlight = put('/big/_doc/a', { n: 1 });
    await gate.arrived(1);

    expect(standIn.forgetDocumentsBeyond(2)).toBe(3);
    expect(standIn.documents('big').size).toBe(0);
    expect(standIn.document('small', 'kept')?.source).toEqual({ id: 'kept' });

    const racing = put('/big/_doc/a', { n: 2 });
    await gate.arrived(2);
    gate.release();
    await Promise.all([inFlight, racing]);
    expect(standIn.overlaps.count).toBe(1);
    expect(standIn.documents('big').size).toBe(1);
  });

  it('injects faults and refuses connections on demand', async () => {
    standIn.injectFault({ kind: 'reset-before-headers' });
    await expect(rawRequest(standIn.url, { path: '/' })).rejects.toThrow();
    const healthy = await rawRequest(standIn.url, { path: '/' });
    expect(jsonOf(healthy)).toMatchObject({ version: { number: '8.15.0' }, tagline: 'You Know, for Search' });

    await standIn.refuseConnections();
    await expect(rawRequest(standIn.url, { path: '/' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await standIn.acceptConnections();
    expect((await rawRequest(standIn.url, { path: '/' })).status).toBe(200);
  });
});
