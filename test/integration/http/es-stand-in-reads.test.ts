import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { jsonOf, rawRequest } from '../../support/http-request.js';

const NO_SUCH_INDEX = (index: string) => ({
  type: 'index_not_found_exception',
  reason: `no such index [${index}]`,
  'resource.type': 'index_expression',
  'resource.id': index,
  index_uuid: '_na_',
  index,
});

/**
 * Realtime reads by id in Elasticsearch 8's shapes: what a client (the proxy's fencing)
 * reads `_seq_no`/`_primary_term` from before a compare-and-write.
 */
describe('Elasticsearch stand-in: realtime GET and _mget', () => {
  let standIn: EsStandIn;
  beforeAll(async () => {
    standIn = await startEsStandIn();
    standIn.defineAlias('reads-alias', 'reads');
    const write = (method: string, path: string, body?: unknown) =>
      rawRequest(standIn.url, { method, path, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    await write('PUT', '/reads/_doc/a', { name: 'lamp', stock: 1 }); // seq_no 0
    await write('POST', '/reads/_update/a', { doc: { stock: 2 } }); // seq_no 1, version 2
    await write('PUT', '/reads/_doc/gone', { name: 'desk' }); // seq_no 2
    await write('DELETE', '/reads/_doc/gone'); // seq_no 3
    await write('PUT', '/reads-other/_doc/b', { name: 'chair' }); // seq_no 0 of its own index
  });
  afterAll(() => standIn.stop());

  const get = (path: string, method = 'GET') => rawRequest(standIn.url, { method, path });
  const mget = (path: string, body: unknown) =>
    rawRequest(standIn.url, { method: 'POST', path, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const FOUND_A = { _index: 'reads', _id: 'a', _version: 2, _seq_no: 1, _primary_term: 1, found: true, _source: { name: 'lamp', stock: 2 } };

  it('GET answers the revision with _version, _seq_no, _primary_term and found, in that order', async () => {
    const response = await get('/reads/_doc/a');
    expect(response.status).toBe(200);
    expect(jsonOf(response)).toEqual(FOUND_A);
    expect(Object.keys(jsonOf(response) as object)).toEqual(['_index', '_id', '_version', '_seq_no', '_primary_term', 'found', '_source']);
  });

  it('GET of a missing or deleted document is 404 found:false; of a missing index, index_not_found_exception', async () => {
    for (const id of ['nope', 'gone']) {
      const response = await get(`/reads/_doc/${id}`);
      expect(response.status).toBe(404);
      expect(jsonOf(response)).toEqual({ _index: 'reads', _id: id, found: false });
    }
    const missingIndex = await get('/reads-nope/_doc/a');
    expect(missingIndex.status).toBe(404);
    expect(jsonOf(missingIndex)).toEqual({ error: { root_cause: [NO_SUCH_INDEX('reads-nope')], ...NO_SUCH_INDEX('reads-nope') }, status: 404 });
  });

  it('GET filters _source, answers HEAD without a body, resolves an alias to its index', async () => {
    const { _source: _, ...withoutSource } = FOUND_A;
    expect(jsonOf(await get('/reads/_doc/a?_source=false'))).toEqual(withoutSource);
    expect(jsonOf(await get('/reads/_doc/a?_source_includes=stock'))).toEqual({ ...FOUND_A, _source: { stock: 2 } });
    expect(jsonOf(await get('/reads/_doc/a?_source_excludes=stock'))).toEqual({ ...FOUND_A, _source: { name: 'lamp' } });
    const head = await get('/reads/_doc/a', 'HEAD');
    expect([head.status, head.body.length]).toEqual([200, 0]);
    expect((await get('/reads/_doc/nope', 'HEAD')).status).toBe(404);
    expect(jsonOf(await get('/reads-alias/_doc/a'))).toEqual(FOUND_A);
  });

  it('_mget with docs answers each document in request order: found, not found, missing index as its error', async () => {
    const response = await mget('/_mget', {
      docs: [
        { _index: 'reads', _id: 'a' },
        { _index: 'reads-other', _id: 'b', _source: false },
        { _index: 'reads', _id: 'gone' },
        { _index: 'reads-nope', _id: 'x' },
      ],
    });
    expect(response.status).toBe(200);
    expect(jsonOf(response)).toEqual({
      docs: [
        FOUND_A,
        { _index: 'reads-other', _id: 'b', _version: 1, _seq_no: 0, _primary_term: 1, found: true },
        { _index: 'reads', _id: 'gone', found: false },
        { _index: 'reads-nope', _id: 'x', error: { root_cause: [NO_SUCH_INDEX('reads-nope')], ...NO_SUCH_INDEX('reads-nope') } },
      ],
    });
  });

  it('_mget on /{index}/_mget takes ids or docs without _index; ?_source=false drops every _source', async () => {
    const byIds = await mget('/reads/_mget?_source=false', { ids: ['a', 'nope'] });
    const { _source: _, ...withoutSource } = FOUND_A;
    expect(jsonOf(byIds)).toEqual({ docs: [withoutSource, { _index: 'reads', _id: 'nope', found: false }] });
    const byDocs = await mget('/reads/_mget', { docs: [{ _id: 'a' }, { _index: 'reads-other', _id: 'b' }] });
    expect(jsonOf(byDocs)).toMatchObject({ docs: [FOUND_A, { _index: 'reads-other', _id: 'b', found: true }] });
  });

  it.each([
    { body: { ids: ['a'] }, reason: 'Validation Failed: 1: index is missing for doc 0;' },
    { body: { docs: [{ _index: 'reads' }, { _id: 'a' }] }, reason: 'Validation Failed: 1: id is missing for doc 0;2: index is missing for doc 1;' },
    { body: { docs: [] }, reason: 'Validation Failed: 1: no documents to get;' },
  ])('_mget refuses $body with 400 action_request_validation_exception', async ({ body, reason }) => {
    const response = await mget('/_mget', body);
    expect(response.status).toBe(400);
    const error = { type: 'action_request_validation_exception', reason };
    expect(jsonOf(response)).toEqual({ error: { root_cause: [error], ...error }, status: 400 });
  });

  it('_mget without a body is 400 parse_exception', async () => {
    const response = await mget('/_mget', undefined);
    expect(response.status).toBe(400);
    expect(jsonOf(response)).toMatchObject({ error: { type: 'parse_exception', reason: 'request body or source parameter is required' }, status: 400 });
  });
});
