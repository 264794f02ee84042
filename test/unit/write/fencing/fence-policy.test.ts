import { describe, expect, it } from 'vitest';
import type { BulkAction } from '../../../../src/classify/bulk-parser.js';
import { BULK_OP_TYPE, fenceableAction, QUERY_OP_TYPE } from '../../../../src/write/fencing/fence-policy.js';
import { fenceFor } from '../../../../src/write/fencing/fence.js';

const params = (query: string) => {
  const parsed = new URLSearchParams(query);
  return (name: string): string | undefined => parsed.get(name) ?? undefined;
};

describe('which writes are fenced', () => {
  it.each<[BulkAction, string, string | null, string | null]>([
    ['index', '', null, 'index'],
    ['index', 'refresh=true&routing=r', null, 'index'],
    ['index', 'op_type=index', null, 'index'],
    ['delete', '', null, 'delete'],
    ['update', '', '{"doc":{"a":1}}', 'update'],
    ['update', 'retry_on_conflict=0', '{"script":{"source":"ctx._source.n++"}}', 'update'],
    // Not fenced: creates are refused by Elasticsearch for an existing document anyway.
    ['create', '', null, null],
    ['index', 'op_type=create', null, null],
    ['index', 'op_type=CREATE', null, null],
    // Not fenced: the request's own concurrency control stays as it is.
    ['index', 'if_seq_no=3&if_primary_term=1', null, null],
    ['delete', 'if_primary_term=1', null, null],
    ['index', 'version=7&version_type=external', null, null],
    ['delete', 'version_type=external_gte', null, null],
    // Not fenced: Elasticsearch refuses if_seq_no together with these.
    ['update', 'retry_on_conflict=3', '{"doc":{"a":1}}', null],
    ['update', '', '{"doc":{"a":1},"doc_as_upsert":true}', null],
    ['update', '', '{"doc":{"a":1},"upsert":{"a":0}}', null],
    ['update', '', '{"script":"x","scripted_upsert":"true","upsert":{}}', null],
    // A body Elasticsearch refuses writes nothing: left to it.
    ['update', '', 'not json', null],
  ])('%s ?%s body %s → %s', (action, query, body, expected) => {
    expect(fenceableAction(action, params(query), () => (body === null ? null : Buffer.from(body)), QUERY_OP_TYPE)).toBe(expected);
  });

  // A query's op_type is read in any case (IndexRequest.opType(String) lower-cases it), a bulk
  // item's exactly: BulkRequestParser makes a create of `"create".equals(opType)` only, an index of
  // anything else ("CREATE", "Create", "bogus").
  it.each<[string, string | null]>([
    ['op_type=create', null],
    ['op_type=CREATE', 'index'],
    ['op_type=Create', 'index'],
    ['op_type=index', 'index'],
    ['op_type=bogus', 'index'],
  ])('bulk metadata %s → %s', (metadata, expected) => {
    expect(fenceableAction('index', params(metadata), () => null, BULK_OP_TYPE)).toBe(expected);
  });

  it('derives the fence from the read: seq_no when found, create for a missing index target, none for update/delete of a missing document', () => {
    const found = { found: true, seqNo: 9, primaryTerm: 2 } as const;
    expect(fenceFor('index', found)).toEqual({ kind: 'seq_no', seqNo: 9, primaryTerm: 2 });
    expect(fenceFor('delete', found)).toEqual({ kind: 'seq_no', seqNo: 9, primaryTerm: 2 });
    expect(fenceFor('index', { found: false })).toEqual({ kind: 'create' });
    expect(fenceFor('update', { found: false })).toBeNull();
    expect(fenceFor('delete', { found: false })).toBeNull();
  });
});
