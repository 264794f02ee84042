import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBulkBody } from '../../../../src/classify/bulk-parser.js';
import type { KeyedBulkItem } from '../../../../src/write/bulk-items.js';
import { fencedActionLine } from '../../../../src/write/fencing/action-line-fence.js';
import { readActionMetadata } from '../../../../src/write/fencing/action-metadata.js';
import { answeredAsSent } from '../../../../src/write/fencing/bulk-answer-rename.js';
import { parseBulkResponse, renderBulkResponse } from '../../../../src/write/bulk-response.js';
import { bulkWaves } from '../../../../src/write/fencing/bulk-waves.js';
import { fenceableItems } from '../../../../src/write/fencing/fenceable-item.js';
import { fencedBulkBody } from '../../../../src/write/fencing/fenced-bulk-body.js';
import { duplicateFieldOf } from '../../../support/es-stand-in/strict-json.js';

const SEQ = { kind: 'seq_no', seqNo: 12, primaryTerm: 2 } as const;
const CREATE = { kind: 'create' } as const;

function fenceLine(line: string, fence: typeof SEQ | typeof CREATE): string {
  const body = Buffer.from(`${line}\n`);
  return fencedActionLine(body, 0, line.length, readActionMetadata(body, 0, line.length), fence).toString();
}

function keyed(body: string): KeyedBulkItem[] {
  return parseBulkBody(Buffer.from(body), 'i').map((item) => ({ item, key: item.id === null ? null : { index: item.index, id: item.id } }));
}

describe('fencedActionLine', () => {
  it.each([
    ['{"index":{"_index":"i","_id":"1"}}', '{"index":{"if_seq_no":12,"if_primary_term":2,"_index":"i","_id":"1"}}'],
    ['{"delete":{}}', '{"delete":{"if_seq_no":12,"if_primary_term":2}}'],
    // Whitespace, escapes and a numeric id beyond 2^53 are kept as written.
    ['{ "update" : { "_id" : 12345678901234567890, "_index":"a\\u00e9" } }', '{ "update" : {"if_seq_no":12,"if_primary_term":2, "_id" : 12345678901234567890, "_index":"a\\u00e9" } }'],
  ])('seq_no fence: %s', (line, expected) => {
    expect(fenceLine(line, SEQ)).toBe(expected);
  });

  it.each([
    ['{"index":{"_id":"1","routing":"r"}}', '{"index":{"op_type":"create","_id":"1","routing":"r"}}'],
    ['{"index":{}}', '{"index":{"op_type":"create"}}'],
    // An explicit op_type is replaced in place: Elasticsearch refuses a duplicate key.
    ['{"index":{"_id":"1","op_type" : "index","pipeline":"p"}}', '{"index":{"_id":"1","op_type" : "create","pipeline":"p"}}'],
  ])('create fence: %s', (line, expected) => {
    expect(fenceLine(line, CREATE)).toBe(expected);
  });

  it.each([
    // Elasticsearch takes a null as absent, but the key is there: the fence's value replaces the null.
    ['{"index":{"_id":"1","if_seq_no":null,"if_primary_term":null}}', SEQ, '{"index":{"_id":"1","if_seq_no":12,"if_primary_term":2}}'],
    ['{"index":{"_id":"1","if_primary_term" : null}}', SEQ, '{"index":{"if_seq_no":12,"_id":"1","if_primary_term" : 2}}'],
    ['{"delete":{"if_seq_no":null}}', SEQ, '{"delete":{"if_primary_term":2,"if_seq_no":12}}'],
    ['{"index":{"_id":"1","op_type":null,"routing":null}}', CREATE, '{"index":{"_id":"1","op_type":"create","routing":null}}'],
    ['{"index":{"op_type":null}}', SEQ, '{"index":{"if_seq_no":12,"if_primary_term":2,"op_type":null}}'],
  ])('null metadata: %s', (line, fence, expected) => {
    expect(fenceLine(line, fence)).toBe(expected);
  });

  it('never names a field twice, and keeps every other field as it was (property)', () => {
    const keys = ['_id', 'routing', 'op_type', 'if_seq_no', 'if_primary_term', 'version', 'version_type', 'pipeline', 'retry_on_conflict', 'not_a_parameter'];
    const value = fc.oneof(fc.constant(null), fc.string({ maxLength: 4 }), fc.integer({ min: 0, max: 99 }));
    const space = fc.constantFrom('', ' ', '\t');
    const line = fc.record({
      action: fc.constantFrom('index', 'update', 'delete'),
      fields: fc.uniqueArray(fc.tuple(fc.constantFrom(...keys), value, space), { selector: ([key]) => key, maxLength: keys.length }),
    });
    fc.assert(
      fc.property(line, fc.constantFrom<typeof SEQ | typeof CREATE>(SEQ, CREATE), ({ action, fields }, fence) => {
        const text = `{"${action}":{${fields.map(([key, v, ws]) => `${ws}${JSON.stringify(key)}${ws}:${ws}${JSON.stringify(v)}${ws}`).join(',')}}}`;
        const fenced = fenceLine(text, fence);
        expect(duplicateFieldOf(fenced)).toBeNull();
        const written = (JSON.parse(fenced) as Record<string, Record<string, unknown>>)[action]!;
        const expected: Record<string, unknown> = Object.fromEntries(fields.map(([key, v]) => [key, v]));
        Object.assign(expected, fence.kind === 'create' ? { op_type: 'create' } : { if_seq_no: 12, if_primary_term: 2 });
        expect(written).toEqual(expected);
      }),
    );
  });
});

describe('fencedBulkBody', () => {
  const body = [
    '{"index":{"_id":"a"}}', '{"v":1}',
    '{"create":{"_id":"b"}}', '{"v":2}',
    '{"delete":{"_id":"c"}}',
    '{"update":{"_id":"d"}}', '{"doc":{"v":3}}',
    '{"index":{}}', '{"auto":true}',
  ].join('\r\n') + '\n';
  const items = keyed(body);

  it('fences index, delete and update items, leaves creates and auto-id items, keeps every other byte', () => {
    const fenceable = fenceableItems(Buffer.from(body), items);
    expect([...fenceable.keys()]).toEqual([0, 2, 3]);
    const fences = new Map([
      [0, { fenceable: fenceable.get(0)!, fence: CREATE }],
      [2, { fenceable: fenceable.get(2)!, fence: SEQ }],
      [3, { fenceable: fenceable.get(3)!, fence: SEQ }],
    ]);
    const fenced = fencedBulkBody(Buffer.from(body), items, fences);
    expect(fenced.body.toString()).toBe(
      body
        .replace('{"index":{"_id":"a"}}', '{"index":{"op_type":"create","_id":"a"}}')
        .replace('{"delete":{"_id":"c"}}', '{"delete":{"if_seq_no":12,"if_primary_term":2,"_id":"c"}}')
        .replace('{"update":{"_id":"d"}}', '{"update":{"if_seq_no":12,"if_primary_term":2,"_id":"d"}}'),
    );
    expect([...fenced.sentAsCreate]).toEqual([0]);
  });

  it('items without a fence (update of a missing document) go as they came', () => {
    const fenced = fencedBulkBody(Buffer.from(body), items, new Map());
    expect(fenced.body.toString()).toBe(body);
  });
});

describe('answeredAsSent', () => {
  const created = { create: { _index: 'i', _id: 'a', status: 201, result: 'created' } };

  it('renames the answer of an index sent as a create back to index', () => {
    expect(answeredAsSent(created, true)).toEqual({ index: { _index: 'i', _id: 'a', status: 201, result: 'created' } });
  });

  it('leaves every other answer as Elasticsearch gave it', () => {
    expect(answeredAsSent(created, false)).toBe(created);
    const updated = { update: { status: 200 } };
    expect(answeredAsSent(updated, true)).toBe(updated);
  });

  it("renames Elasticsearch's own bytes, every number as it wrote it", () => {
    const item = (action: string): string => `{ ${action} : {"_id":"a\\"b","_version":1732780800123456789,"status":201,"result":"created"}}`;
    const [answer] = parseBulkResponse(Buffer.from(`{"took":1,"errors":false,"items":[${item('"create"')}, ${item('"update"')}]}`), 2).items;
    const renamed = answeredAsSent(answer!, true);
    expect(renderBulkResponse(1, [renamed]).toString()).toBe(`{"took":1,"errors":false,"items":[${item('"index"').replace('{ "index"', '{"index"')}]}`);
    const [, other] = parseBulkResponse(Buffer.from(`{"took":1,"errors":false,"items":[${item('"create"')}, ${item('"update"')}]}`), 2).items;
    expect(answeredAsSent(other!, true)).toBe(other);
  });
});

describe('bulkWaves', () => {
  it('puts the k-th item of each document in wave k, request order kept, unlocked items first', () => {
    const items = keyed(['{"index":{"_id":"a"}}', '{}', '{"index":{"_id":"b"}}', '{}', '{"delete":{"_id":"a"}}', '{"index":{}}', '{}', '{"update":{"_id":"a"}}', '{"doc":{}}'].join('\n') + '\n');
    expect(bulkWaves(items).map((wave) => wave.map((keyed) => keyed.item.position))).toEqual([[0, 1, 3], [2], [4]]);
  });
});
