import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { jsonOf, rawRequest } from '../../support/http-request.js';

/**
 * Elasticsearch 8's optimistic concurrency control as the stand-in applies it, case by case:
 * status and body, field for field. Expected messages are Elasticsearch's own
 * (VersionConflictEngineException, VersionType, DocWriteRequest/IndexRequest/UpdateRequest.validate,
 * BulkRequestParser, rest-api-spec bulk/10_basic "Empty _id").
 */
type Step = readonly [method: string, path: string, body?: unknown];

const SHARDS = { total: 2, successful: 1, failed: 0 };
/** `d` exists: version 1, seq_no 0. */
const EXISTS: readonly Step[] = [['PUT', '/{i}/_doc/d', { v: 0 }]];
/** `d` deleted: a tombstone with version 2, seq_no 1. */
const DELETED: readonly Step[] = [...EXISTS, ['DELETE', '/{i}/_doc/d']];
/** The index exists (seq_no 0 used by another document), `d` never did. */
const INDEX_ONLY: readonly Step[] = [['PUT', '/{i}/_doc/other', { v: 0 }]];

const written = (result: string, version: number, seqNo: number) => ({ _index: '{i}', _id: 'd', _version: version, result, _shards: SHARDS, _seq_no: seqNo, _primary_term: 1 });
const located = (type: string, reason: string) => ({ type, reason, index_uuid: expect.any(String), shard: '0', index: '{i}' });
const wrapped = (status: number, error: Record<string, unknown>) => ({ error: { root_cause: [error], ...error }, status });
const conflict = (detail: string) => wrapped(409, located('version_conflict_engine_exception', `[d]: version conflict, ${detail}`));
const invalid = (...messages: string[]) =>
  wrapped(400, { type: 'action_request_validation_exception', reason: `Validation Failed: ${messages.map((m, n) => `${n + 1}: ${m};`).join('')}` });
const illegal = (reason: string) => wrapped(400, { type: 'illegal_argument_exception', reason });
const CAS_ONLY = 'internal versioning can not be used for optimistic concurrency control. Please use `if_seq_no` and `if_primary_term` instead';

interface Case {
  readonly name: string;
  readonly setup: readonly Step[];
  readonly request: Step;
  readonly status: number;
  readonly body: unknown;
}

const CASES: readonly Case[] = [
  // index: if_seq_no / if_primary_term
  { name: 'index, matching if_seq_no', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?if_seq_no=0&if_primary_term=1', { v: 1 }], status: 200, body: written('updated', 2, 1) },
  {
    name: 'index, stale if_seq_no',
    setup: EXISTS,
    request: ['PUT', '/{i}/_doc/d?if_seq_no=5&if_primary_term=1', { v: 1 }],
    status: 409,
    body: conflict('required seqNo [5], primary term [1]. current document has seqNo [0] and primary term [1]'),
  },
  {
    name: 'index, other primary term',
    setup: EXISTS,
    request: ['PUT', '/{i}/_doc/d?if_seq_no=0&if_primary_term=2', { v: 1 }],
    status: 409,
    body: conflict('required seqNo [0], primary term [2]. current document has seqNo [0] and primary term [1]'),
  },
  { name: 'index, if_seq_no on a missing document', setup: INDEX_ONLY, request: ['PUT', '/{i}/_doc/d?if_seq_no=0&if_primary_term=1', { v: 1 }], status: 409, body: conflict('required seqNo [0], primary term [1]. but no document was found') },
  { name: 'index, if_seq_no on a deleted document', setup: DELETED, request: ['PUT', '/{i}/_doc/d?if_seq_no=1&if_primary_term=1', { v: 1 }], status: 409, body: conflict('required seqNo [1], primary term [1]. but no document was found') },
  { name: 'index, if_seq_no without if_primary_term', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?if_seq_no=0', { v: 1 }], status: 400, body: invalid('ifSeqNo is set, but primary term is [0]') },
  { name: 'index, if_primary_term without if_seq_no', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?if_primary_term=1', { v: 1 }], status: 400, body: invalid('ifSeqNo is unassigned, but primary term is [1]') },
  { name: 'index, unparsable if_seq_no', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?if_seq_no=abc&if_primary_term=1', { v: 1 }], status: 400, body: illegal('Failed to parse long parameter [if_seq_no] with value [abc]') },
  { name: 'index, negative if_seq_no', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?if_seq_no=-5&if_primary_term=1', { v: 1 }], status: 400, body: illegal('sequence numbers must be non negative. got [-5].') },
  // index: version / version_type
  { name: 'index, internal version (refused by Elasticsearch 8)', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?version=1', { v: 1 }], status: 400, body: invalid(CAS_ONLY) },
  { name: 'index, external version above', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?version=5&version_type=external', { v: 1 }], status: 200, body: written('updated', 5, 1) },
  {
    name: 'index, external version equal',
    setup: EXISTS,
    request: ['PUT', '/{i}/_doc/d?version=1&version_type=external', { v: 1 }],
    status: 409,
    body: conflict('current version [1] is higher or equal to the one provided [1]'),
  },
  { name: 'index, external_gte version equal', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?version=1&version_type=external_gte', { v: 1 }], status: 200, body: written('updated', 1, 1) },
  {
    name: 'index, external_gte version below',
    setup: EXISTS,
    request: ['PUT', '/{i}/_doc/d?version=0&version_type=external_gte', { v: 1 }],
    status: 409,
    body: conflict('current version [1] is higher than the one provided [0]'),
  },
  { name: 'index, external_gt is external', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?version=1&version_type=external_gt', { v: 1 }], status: 409, body: conflict('current version [1] is higher or equal to the one provided [1]') },
  { name: 'index, external without a version', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?version_type=external', { v: 1 }], status: 400, body: invalid('illegal version value [-3] for version type [EXTERNAL]') },
  { name: 'index, unknown version_type', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?version=2&version_type=bogus', { v: 1 }], status: 400, body: illegal('No version type match [bogus]') },
  {
    name: 'index, external version and if_seq_no together',
    setup: EXISTS,
    request: ['PUT', '/{i}/_doc/d?version=3&version_type=external&if_seq_no=0&if_primary_term=1', { v: 1 }],
    status: 400,
    body: invalid('compare and write operations can not use versioning'),
  },
  { name: 'index, external version on a missing document', setup: INDEX_ONLY, request: ['PUT', '/{i}/_doc/d?version=7&version_type=external', { v: 1 }], status: 201, body: written('created', 7, 1) },
  {
    name: 'index, external version not above the tombstone',
    setup: DELETED,
    request: ['PUT', '/{i}/_doc/d?version=2&version_type=external', { v: 1 }],
    status: 409,
    body: conflict('current version [2] is higher or equal to the one provided [2]'),
  },
  { name: 'index, external version above the tombstone', setup: DELETED, request: ['PUT', '/{i}/_doc/d?version=3&version_type=external', { v: 1 }], status: 201, body: written('created', 3, 2) },
  { name: 'index, internal after a delete counts on from the tombstone', setup: DELETED, request: ['PUT', '/{i}/_doc/d', { v: 1 }], status: 201, body: written('created', 3, 2) },
  // create
  { name: 'op_type=create on an existing document', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?op_type=create', { v: 1 }], status: 409, body: conflict('document already exists (current version [1])') },
  { name: '_create on an existing document', setup: EXISTS, request: ['PUT', '/{i}/_create/d', { v: 1 }], status: 409, body: conflict('document already exists (current version [1])') },
  { name: '_create on a deleted document', setup: DELETED, request: ['PUT', '/{i}/_create/d', { v: 1 }], status: 201, body: written('created', 3, 2) },
  { name: 'op_type=create with if_seq_no', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?op_type=create&if_seq_no=0&if_primary_term=1', { v: 1 }], status: 400, body: invalid('create operations do not support compare and set. use index instead') },
  { name: '_create with an external version', setup: INDEX_ONLY, request: ['PUT', '/{i}/_create/d?version=5&version_type=external', { v: 1 }], status: 400, body: invalid('create operations only support internal versioning. use index instead') },
  { name: '_create with an internal version', setup: INDEX_ONLY, request: ['PUT', '/{i}/_create/d?version=5', { v: 1 }], status: 400, body: invalid('create operations do not support explicit versions. use index instead') },
  { name: 'unknown op_type', setup: EXISTS, request: ['PUT', '/{i}/_doc/d?op_type=bogus', { v: 1 }], status: 400, body: illegal("opType must be 'create' or 'index', found: [bogus]") },
  { name: '_create with op_type=index', setup: EXISTS, request: ['PUT', '/{i}/_create/d?op_type=index', { v: 1 }], status: 400, body: illegal("opType must be 'create', found: [index]") },
  // delete
  { name: 'delete an existing document', setup: EXISTS, request: ['DELETE', '/{i}/_doc/d'], status: 200, body: written('deleted', 2, 1) },
  { name: 'delete a missing document', setup: INDEX_ONLY, request: ['DELETE', '/{i}/_doc/d'], status: 404, body: written('not_found', 1, 1) },
  { name: 'delete a deleted document counts on from the tombstone', setup: DELETED, request: ['DELETE', '/{i}/_doc/d'], status: 404, body: written('not_found', 3, 2) },
  {
    name: 'delete in a missing index',
    setup: [],
    request: ['DELETE', '/{i}/_doc/d'],
    status: 404,
    body: wrapped(404, { type: 'index_not_found_exception', reason: 'no such index [{i}]', 'resource.type': 'index_expression', 'resource.id': '{i}', index_uuid: '_na_', index: '{i}' }),
  },
  { name: 'delete in a missing index with an external version creates it', setup: [], request: ['DELETE', '/{i}/_doc/d?version=4&version_type=external'], status: 404, body: written('not_found', 4, 0) },
  {
    name: 'delete, stale if_seq_no',
    setup: EXISTS,
    request: ['DELETE', '/{i}/_doc/d?if_seq_no=9&if_primary_term=1'],
    status: 409,
    body: conflict('required seqNo [9], primary term [1]. current document has seqNo [0] and primary term [1]'),
  },
  { name: 'delete, if_seq_no on a missing document', setup: INDEX_ONLY, request: ['DELETE', '/{i}/_doc/d?if_seq_no=0&if_primary_term=1'], status: 409, body: conflict('required seqNo [0], primary term [1]. but no document was found') },
  { name: 'delete, external version equal', setup: EXISTS, request: ['DELETE', '/{i}/_doc/d?version=1&version_type=external'], status: 409, body: conflict('current version [1] is higher or equal to the one provided [1]') },
  { name: 'delete, external version above', setup: EXISTS, request: ['DELETE', '/{i}/_doc/d?version=5&version_type=external'], status: 200, body: written('deleted', 5, 1) },
  { name: 'delete, internal version', setup: EXISTS, request: ['DELETE', '/{i}/_doc/d?version=1'], status: 400, body: invalid(CAS_ONLY) },
  // update
  { name: 'update an existing document', setup: EXISTS, request: ['POST', '/{i}/_update/d', { doc: { w: 1 } }], status: 200, body: written('updated', 2, 1) },
  {
    name: 'update that changes nothing',
    setup: EXISTS,
    request: ['POST', '/{i}/_update/d', { doc: { v: 0 } }],
    status: 200,
    body: { ...written('noop', 1, 0), _shards: { total: 0, successful: 0, failed: 0 } },
  },
  { name: 'update with detect_noop false', setup: EXISTS, request: ['POST', '/{i}/_update/d', { doc: { v: 0 }, detect_noop: false }], status: 200, body: written('updated', 2, 1) },
  { name: 'update a missing document', setup: INDEX_ONLY, request: ['POST', '/{i}/_update/d', { doc: { w: 1 } }], status: 404, body: wrapped(404, located('document_missing_exception', '[d]: document missing')) },
  { name: 'update with doc_as_upsert', setup: INDEX_ONLY, request: ['POST', '/{i}/_update/d', { doc: { w: 1 }, doc_as_upsert: true }], status: 201, body: written('created', 1, 1) },
  { name: 'update with upsert on a deleted document', setup: DELETED, request: ['POST', '/{i}/_update/d', { doc: { w: 1 }, upsert: { w: 0 } }], status: 201, body: written('created', 3, 2) },
  { name: 'update, matching if_seq_no', setup: EXISTS, request: ['POST', '/{i}/_update/d?if_seq_no=0&if_primary_term=1', { doc: { w: 1 } }], status: 200, body: written('updated', 2, 1) },
  {
    name: 'update, stale if_seq_no',
    setup: EXISTS,
    request: ['POST', '/{i}/_update/d?if_seq_no=3&if_primary_term=1', { doc: { w: 1 } }],
    status: 409,
    body: conflict('required seqNo [3], primary term [1]. current document has seqNo [0] and primary term [1]'),
  },
  { name: 'update, if_seq_no on a missing document', setup: INDEX_ONLY, request: ['POST', '/{i}/_update/d?if_seq_no=0&if_primary_term=1', { doc: { w: 1 } }], status: 404, body: wrapped(404, located('document_missing_exception', '[d]: document missing')) },
  { name: 'update with a version', setup: EXISTS, request: ['POST', '/{i}/_update/d?version=1', { doc: { w: 1 } }], status: 400, body: invalid(CAS_ONLY) },
  { name: 'update with a version_type', setup: EXISTS, request: ['POST', '/{i}/_update/d?version_type=external', { doc: { w: 1 } }], status: 400, body: invalid(CAS_ONLY) },
  { name: 'update, if_seq_no with retry_on_conflict', setup: EXISTS, request: ['POST', '/{i}/_update/d?if_seq_no=0&if_primary_term=1&retry_on_conflict=2', { doc: { w: 1 } }], status: 400, body: invalid('compare and write operations can not be retried') },
  {
    name: 'update, if_seq_no with doc_as_upsert',
    setup: EXISTS,
    request: ['POST', '/{i}/_update/d?if_seq_no=0&if_primary_term=1', { doc: { w: 1 }, doc_as_upsert: true }],
    status: 400,
    body: invalid('compare and write operations can not be used with upsert'),
  },
  {
    name: 'update, if_seq_no with upsert',
    setup: EXISTS,
    request: ['POST', '/{i}/_update/d?if_seq_no=0&if_primary_term=1', { doc: { w: 1 }, upsert: { w: 0 } }],
    status: 400,
    body: invalid("upsert requests don't support `if_seq_no` and `if_primary_term`"),
  },
  { name: 'update without doc or script', setup: EXISTS, request: ['POST', '/{i}/_update/d', {}], status: 400, body: invalid('script or doc is missing') },
  { name: 'update with retry_on_conflict', setup: EXISTS, request: ['POST', '/{i}/_update/d?retry_on_conflict=3', { doc: { w: 1 } }], status: 200, body: written('updated', 2, 1) },
];

describe('Elasticsearch stand-in: optimistic concurrency control', () => {
  let standIn: EsStandIn;
  let cases = 0;
  beforeAll(async () => {
    standIn = await startEsStandIn();
  });
  afterAll(() => standIn.stop());

  const send = async (index: string, [method, path, body]: Step) => {
    const response = await rawRequest(standIn.url, {
      method,
      path: path.replaceAll('{i}', index),
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: response.body.length > 0 ? jsonOf(response) : undefined };
  };
  /** Each case in an index of its own, so sequence numbers start at 0. */
  const freshIndex = (): string => `cc-${(cases += 1)}`;

  it.each(CASES)('$name: $status', async ({ setup, request, status, body }) => {
    const index = freshIndex();
    for (const step of setup) expect((await send(index, step)).status).toBeLessThan(500);
    const answer = await send(index, request);
    expect(answer.status).toBe(status);
    expect(answer.json).toEqual(inIndex(index, body));
  });

  it('answers a conflict and a write in Elasticsearch field order', async () => {
    const index = freshIndex();
    const created = await send(index, ['PUT', '/{i}/_doc/d', { v: 0 }]);
    expect(Object.keys(created.json as object)).toEqual(['_index', '_id', '_version', 'result', '_shards', '_seq_no', '_primary_term']);
    const refused = await send(index, ['PUT', '/{i}/_create/d', { v: 1 }]);
    const error = (refused.json as { error: Record<string, unknown> }).error;
    expect(Object.keys(error)).toEqual(['root_cause', 'type', 'reason', 'index_uuid', 'shard', 'index']);
    expect(error.index_uuid).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('applies bulk items in item order, each under the same rules, conflicts as 409 items of a 200 answer', async () => {
    const index = freshIndex();
    await send(index, ['PUT', '/{i}/_doc/a', { v: 0 }]);
    const lines = [
      { index: { _index: index, _id: 'a', if_seq_no: 0, if_primary_term: 1 } },
      { v: 1 },
      // Sees the seq_no the previous item produced: items apply in order.
      { index: { _index: index, _id: 'a', if_seq_no: 1, if_primary_term: 1 } },
      { v: 2 },
      { index: { _index: index, _id: 'a', if_seq_no: 0, if_primary_term: 1 } },
      { v: 'stale' },
      { create: { _index: index, _id: 'a' } },
      { v: 3 },
      { index: { _index: index, _id: 'b', op_type: 'create' } },
      { v: 0 },
      { index: { _index: index, _id: 'b', version: 0, version_type: 'external' } },
      { v: 1 },
      { delete: { _index: index, _id: 'missing' } },
      { delete: { _index: `${index}-nope`, _id: 'x' } },
      { update: { _index: index, _id: 'missing' } },
      { doc: { v: 1 } },
      { index: { _index: index, _id: '' } },
      { v: 'empty id' },
      { update: { _index: index, _id: 'a', if_seq_no: 2, if_primary_term: 1 } },
      { doc: { w: 1 } },
    ];
    const response = await rawRequest(standIn.url, { method: 'POST', path: '/_bulk', headers: { 'content-type': 'application/x-ndjson' }, body: lines.map((line) => JSON.stringify(line)).join('\n') + '\n' });
    expect(response.status).toBe(200);
    const item = (result: string, version: number, seqNo: number, status: number, id = 'a') => ({ _index: index, _id: id, _version: version, result, _shards: SHARDS, _seq_no: seqNo, _primary_term: 1, status });
    const failed = (id: string, status: number, error: Record<string, unknown>, itemIndex = index) => ({ _index: itemIndex, _id: id, status, error });
    const vcee = (id: string, detail: string) => ({ type: 'version_conflict_engine_exception', reason: `[${id}]: version conflict, ${detail}`, index_uuid: expect.any(String), shard: '0', index });
    expect(jsonOf(response)).toEqual({
      errors: true,
      took: expect.any(Number),
      items: [
        { index: item('updated', 2, 1, 200) },
        { index: item('updated', 3, 2, 200) },
        { index: failed('a', 409, vcee('a', 'required seqNo [0], primary term [1]. current document has seqNo [2] and primary term [1]')) },
        { create: failed('a', 409, vcee('a', 'document already exists (current version [3])')) },
        { create: item('created', 1, 3, 201, 'b') },
        { index: failed('b', 409, vcee('b', 'current version [1] is higher or equal to the one provided [0]')) },
        { delete: item('not_found', 1, 4, 404, 'missing') },
        {
          delete: failed(
            'x',
            404,
            { type: 'index_not_found_exception', reason: `no such index [${index}-nope]`, 'resource.type': 'index_expression', 'resource.id': `${index}-nope`, index_uuid: '_na_', index: `${index}-nope` },
            `${index}-nope`,
          ),
        },
        { update: failed('missing', 404, { type: 'document_missing_exception', reason: '[missing]: document missing', index_uuid: expect.any(String), shard: '0', index }) },
        { index: failed('', 400, { type: 'illegal_argument_exception', reason: 'if _id is specified it must not be empty' }) },
        // The 409 above used no sequence number: a's last write is still seq_no 2.
        { update: item('updated', 4, 5, 200) },
      ],
    });
    expect(standIn.document(index, 'a')?.source).toEqual({ v: 2, w: 1 });
    expect(standIn.document(index, '')).toBeUndefined();
  });

  it.each([
    { name: 'delete with an empty _id', lines: [{ delete: { _index: 'bulk-400', _id: '' } }], body: invalid('id is missing') },
    { name: 'update with an empty _id', lines: [{ update: { _index: 'bulk-400', _id: '' } }, { doc: { v: 1 } }], body: invalid('id is missing') },
    { name: 'update without _id', lines: [{ update: { _index: 'bulk-400' } }, { doc: { v: 1 } }], body: invalid('id is missing') },
    {
      name: 'update with a version',
      lines: [{ update: { _index: 'bulk-400', _id: 'a', version: 2 } }, { doc: { v: 1 } }],
      body: illegal('Update requests do not support versioning. Please use `if_seq_no` and `if_primary_term` instead'),
    },
    { name: 'index with an internal version', lines: [{ index: { _index: 'bulk-400', _id: 'a', version: 2 } }, { v: 1 }], body: invalid(CAS_ONLY) },
    { name: 'if_seq_no without if_primary_term', lines: [{ index: { _index: 'bulk-400', _id: 'a', if_seq_no: 1 } }, { v: 1 }], body: invalid('ifSeqNo is set, but primary term is [0]') },
    {
      name: 'every item validated, messages numbered',
      lines: [{ delete: { _index: 'bulk-400', _id: '' } }, { index: { _index: 'bulk-400', _id: 'a', version: 2 } }, { v: 1 }],
      body: invalid('id is missing', CAS_ONLY),
    },
    {
      name: 'an array _id',
      lines: [{ index: { _index: 'bulk-400', _id: [] } }, { v: 1 }],
      body: illegal('Malformed action/metadata line [1], expected a simple value for field [_id] but found [START_ARRAY]'),
    },
    { name: 'an unknown metadata key', lines: [{ index: { _index: 'bulk-400', _id: 'a', foo: 1 } }, { v: 1 }], body: illegal('Action/metadata line [1] contains an unknown parameter [foo]') },
    { name: 'an unknown action', lines: [{ upsert: { _index: 'bulk-400', _id: 'a' } }, { v: 1 }], body: illegal('Malformed action/metadata line [1], expected field [create], [delete], [index] or [update] but found [upsert]') },
    { name: 'no actions', lines: [], body: invalid('no requests added') },
  ])('fails a whole _bulk with 400 for $name, writing nothing', async ({ lines, body }) => {
    const before = standIn.requests.length;
    const response = await rawRequest(standIn.url, { method: 'POST', path: '/_bulk', headers: { 'content-type': 'application/x-ndjson' }, body: lines.map((line) => JSON.stringify(line)).join('\n') + '\n' });
    expect(response.status).toBe(400);
    expect(jsonOf(response)).toEqual(body);
    expect(standIn.history('bulk-400', 'a')).toEqual([]);
    expect(standIn.requests.length).toBe(before + 1);
  });

  it('fails a whole _bulk with 400 x_content_parse_exception when an action line names a field twice, a null one too', async () => {
    const body = ['{"index":{"_index":"bulk-dup","_id":"a","if_seq_no":null,"if_seq_no":0,"if_primary_term":1}}', '{"v":1}', ''].join('\n');
    const response = await rawRequest(standIn.url, { method: 'POST', path: '/_bulk', headers: { 'content-type': 'application/x-ndjson' }, body });
    expect(response.status).toBe(400);
    expect(jsonOf(response)).toEqual(wrapped(400, { type: 'x_content_parse_exception', reason: "[1:69] Duplicate field 'if_seq_no'" }));
    expect(standIn.history('bulk-dup', 'a')).toEqual([]);
  });

  it('fails a bulk document naming a field twice as its item (document_parsing_exception), an update body so as the whole request', async () => {
    const index = freshIndex();
    const ndjsonOf = (lines: string[]) => ({ method: 'POST', path: '/_bulk', headers: { 'content-type': 'application/x-ndjson' }, body: `${lines.join('\n')}\n` });
    const items = await rawRequest(standIn.url, ndjsonOf([`{"index":{"_index":"${index}","_id":"a"}}`, '{"v":1,"v":2}', `{"index":{"_index":"${index}","_id":"b"}}`, '{"v":1}']));
    expect(items.status).toBe(200);
    expect((jsonOf(items) as { items: unknown[] }).items[0]).toEqual({
      index: { _index: index, _id: 'a', status: 400, error: { type: 'document_parsing_exception', reason: "[1:11] failed to parse: [1:11] Duplicate field 'v'" } },
    });
    expect([standIn.document(index, 'a'), standIn.document(index, 'b')?.source]).toEqual([undefined, { v: 1 }]);
    const update = await rawRequest(standIn.url, ndjsonOf([`{"update":{"_index":"${index}","_id":"b"}}`, '{"doc":{"w":1},"doc":{"w":2}}']));
    expect(update.status).toBe(400);
    expect(jsonOf(update)).toEqual(wrapped(400, { type: 'x_content_parse_exception', reason: "[1:21] Duplicate field 'doc'" }));
    expect(standIn.document(index, 'b')?.source).toEqual({ v: 1 });
  });

  it('refuses a single write whose body names a field twice, writing nothing', async () => {
    const index = freshIndex();
    const json = { 'content-type': 'application/json' };
    const indexed = await rawRequest(standIn.url, { method: 'PUT', path: `/${index}/_doc/a`, headers: json, body: '{"v":1,"v":2}' });
    expect([indexed.status, jsonOf(indexed)]).toEqual([400, wrapped(400, { type: 'document_parsing_exception', reason: "[1:11] failed to parse: [1:11] Duplicate field 'v'" })]);
    await send(index, ['PUT', '/{i}/_doc/b', { v: 0 }]);
    const updated = await rawRequest(standIn.url, { method: 'POST', path: `/${index}/_update/b`, headers: json, body: '{"doc":{"w":1,"w":2}}' });
    expect([updated.status, jsonOf(updated)]).toEqual([400, wrapped(400, { type: 'x_content_parse_exception', reason: "[1:18] Duplicate field 'w'" })]);
    expect([standIn.document(index, 'a'), standIn.document(index, 'b')?.source]).toEqual([undefined, { v: 0 }]);
  });

  it('takes a null metadata value as absent, whatever its key, as BulkRequestParser skips VALUE_NULL', async () => {
    const index = freshIndex();
    await send(index, ['PUT', '/{i}/_doc/a', { v: 0 }]);
    const nulls = '"routing":null,"op_type":null,"version":null,"version_type":null,"if_seq_no":null,"if_primary_term":null,"retry_on_conflict":null,"pipeline":null,"not_a_parameter":null';
    const body = [
      `{"index":{"_index":"${index}","_id":"a",${nulls}}}`,
      '{"v":1}',
      `{"index":{"_index":"${index}","_id":"b",${nulls}}}`,
      '{"v":1}',
      `{"update":{"_index":"${index}","_id":"a",${nulls}}}`,
      '{"doc":{"w":1}}',
      `{"delete":{"_index":"${index}","_id":"b",${nulls}}}`,
      '',
    ].join('\n');
    const response = await rawRequest(standIn.url, { method: 'POST', path: '/_bulk', headers: { 'content-type': 'application/x-ndjson' }, body });
    expect(response.status).toBe(200);
    const statuses = (jsonOf(response) as { items: Record<string, { status: number; result: string }>[] }).items.map((item) => Object.entries(item).map(([action, { status, result }]) => `${action} ${status} ${result}`)[0]);
    expect(statuses).toEqual(['index 200 updated', 'index 201 created', 'update 200 updated', 'delete 200 deleted']);
    expect(standIn.document(index, 'a')?.source).toEqual({ v: 1, w: 1 });
    expect(standIn.document(index, 'b')).toBeUndefined();
  });

  it('forgets a delete tombstone after gc_deletes: an external version below it is accepted then', async () => {
    const shortGc = await startEsStandIn({ gcDeletesMs: 50 });
    try {
      const put = (path: string) => rawRequest(shortGc.url, { method: 'PUT', path, headers: { 'content-type': 'application/json' }, body: '{"v":1}' });
      expect((await put('/gc/_doc/d?version=10&version_type=external')).status).toBe(201);
      expect(jsonOf(await rawRequest(shortGc.url, { method: 'DELETE', path: '/gc/_doc/d?version=11&version_type=external' }))).toMatchObject({ result: 'deleted', _version: 11 });
      const early = await put('/gc/_doc/d?version=5&version_type=external');
      expect(early.status).toBe(409);
      await vi.waitFor(async () => expect((await put('/gc/_doc/d?version=5&version_type=external')).status).toBe(201), { timeout: 5_000, interval: 20 });
      expect(shortGc.document('gc', 'd')).toMatchObject({ version: 5, source: { v: 1 } });
    } finally {
      await shortGc.stop();
    }
  });
});

/** `expected` with `{i}` replaced by the case's index, asymmetric matchers (`expect.any`) left as they are. */
function inIndex(index: string, expected: unknown): unknown {
  if (typeof expected === 'string') return expected.replaceAll('{i}', index);
  if (Array.isArray(expected)) return expected.map((entry) => inIndex(index, entry));
  if (typeof expected !== 'object' || expected === null || Object.getPrototypeOf(expected) !== Object.prototype) return expected;
  return Object.fromEntries(Object.entries(expected).map(([key, entry]) => [key, inIndex(index, entry)]));
}
