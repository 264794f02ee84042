import { describe, expect, it } from 'vitest';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { parseBulkResponse, renderBulkResponse } from '../../../src/write/bulk-response.js';
import { resultOf } from '../../../src/write/upstream-item.js';

const answer = (value: unknown): Buffer => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('parseBulkResponse', () => {
  it('reads took, errors and the items of an Elasticsearch answer', () => {
    const items = [{ index: { _id: 'a', status: 201 } }, { delete: { _id: 'b', status: 404, result: 'not_found' } }];
    const parsed = parseBulkResponse(answer({ took: 7, errors: false, items }), 2);
    expect({ took: parsed.took, errors: parsed.errors, items: parsed.items.map(resultOf) }).toEqual({ took: 7, errors: false, items });
  });

  it('reads any key order, whitespace, escapes and nesting inside an item, and keys it does not know', () => {
    const tricky = { index: { _id: 'quote " brace } bracket ] backslash \\', status: 201, error: null, tags: [[], {}, [{ a: [-1.5e3, true, false, null] }]], 'k\\"ey': 'é😀' } };
    const body = `{ "items" : [ ${JSON.stringify(tricky, null, 2)} ] ,\n "ingest_took": {"x": [1]}, "errors" : false, "took" : 12 }\n`;
    const parsed = parseBulkResponse(Buffer.from(body), 1);
    expect(parsed.took).toBe(12);
    expect(parsed.items.map(resultOf)).toEqual([tricky]);
  });

  it.each([
    ['a body that is not JSON', '<html>502 Bad Gateway</html>', 2],
    ['an error answer instead of items', { error: { type: 'x' }, status: 500 }, 1],
    ['fewer items than were sent', { took: 1, errors: false, items: [{ index: { status: 201 } }] }, 2],
    ['an item that is not one action with its result', { took: 1, errors: false, items: [{ index: { status: 201 }, create: { status: 201 } }] }, 1],
    ['an item that is not an object', { took: 1, errors: false, items: ['created'] }, 1],
    ['an action whose result is not an object', { took: 1, errors: false, items: [{ index: 201 }] }, 1],
    ['a body cut short inside a string', '{"took":1,"errors":false,"items":[{"index":{"_id":"a', 1],
    ['a body cut short after an item', '{"took":1,"errors":false,"items":[{"index":{"status":201}}', 1],
    ['text after the answer', '{"took":1,"errors":false,"items":[{"index":{"status":201}}]} trailing', 1],
    ['a trailing comma', '{"took":1,"errors":false,"items":[{"index":{"status":201}},]}', 1],
    ['a misspelt literal', '{"took":1,"errors":fals,"items":[{"index":{"status":201}}]}', 1],
    ['a number with a leading zero', '{"took":1,"errors":false,"items":[{"index":{"status":0201}}]}', 1],
    ['a number without digits after its point', '{"took":1.,"errors":false,"items":[{"index":{"status":201}}]}', 1],
    ['a literal cut short at the end', '{"took":1,"items":[{"index":{"found":tr', 1],
    ['nesting deeper than any answer', `{"took":1,"items":[{"index":{"x":${'['.repeat(300)}${']'.repeat(300)}}}]}`, 1],
  ])('treats %s as an upstream fault (502)', (_case, body, expected) => {
    let thrown: unknown;
    try {
      parseBulkResponse(answer(body), expected);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProxyError);
    expect((thrown as ProxyError).code).toBe('UPSTREAM_RESET');
  });
});

/** A small deterministic generator of JSON values, strings with the characters a scanner must not trip on. */
function randomValue(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 4 : 6));
  const pieces = ['a', '"', '\\', '}', ']', '{', ',', ':', ' ', '\n', 'é', '😀', '\u0001'];
  if (pick === 0) return Math.round((next() - 0.5) * 1e6) / (next() < 0.5 ? 1 : 1000);
  if (pick === 1) return Array.from({ length: Math.floor(next() * 6) }, () => pieces[Math.floor(next() * pieces.length)]).join('');
  if (pick === 2) return next() < 0.5;
  if (pick === 3) return null;
  if (pick === 4) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, (_, i) => [`k${i}${String(randomValue(next, 9))}`, randomValue(next, depth + 1)]));
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe('parseBulkResponse and renderBulkResponse together', () => {
  it('give back what JSON.parse reads, for 300 random answers, and refuse every cut-short one', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = seeded(seed);
      const items = Array.from({ length: 1 + Math.floor(next() * 5) }, () => ({ [next() < 0.5 ? 'index' : 'delete']: { status: 201, extra: randomValue(next, 0) } }));
      const body = Buffer.from(JSON.stringify({ took: seed, errors: false, items }, null, seed % 2 === 0 ? 1 : undefined));
      const parsed = parseBulkResponse(body, items.length);
      expect(JSON.parse(renderBulkResponse(parsed.took, parsed.items).toString())).toEqual({ took: seed, errors: false, items });
      const cut = Math.floor(next() * (body.length - 1)) + 1;
      if (body.subarray(cut).toString().trim() !== '') expect(() => parseBulkResponse(body.subarray(0, cut), items.length)).toThrow(ProxyError);
    }
  });
});

describe('renderBulkResponse', () => {
  it('sets errors when any item carries an error, as Elasticsearch does', () => {
    const ok = { index: { _id: 'a', status: 201 } };
    const failed = { create: { _id: 'b', status: 409, error: { type: 'version_conflict_engine_exception', reason: 'exists' } } };
    expect(JSON.parse(renderBulkResponse(3, [ok, failed]).toString())).toEqual({ took: 3, errors: true, items: [ok, failed] });
    expect(JSON.parse(renderBulkResponse(3, [ok]).toString())).toEqual({ took: 3, errors: false, items: [ok] });
  });

  it('does not count a 404 delete without an error as a failure', () => {
    const notFound = { delete: { _id: 'a', status: 404, result: 'not_found' } };
    expect(JSON.parse(renderBulkResponse(1, [notFound]).toString()).errors).toBe(false);
  });

  it("copies Elasticsearch's items byte for byte, in the order given, beside the proxy's own", () => {
    const first = '{"index":{"_id":"a","_version":1.0,"note":"\\u00e9","status":201}}';
    const second = '{"create":{"_id":"b","status":409,"error":{"type":"version_conflict_engine_exception"}}}';
    const upstream = parseBulkResponse(Buffer.from(`{"took":2,"errors":true,"items":[${first},\n  ${second}]}`), 2).items;
    const own = { index: { _id: 'c', status: 429, error: { type: 'lock_wait_timeout_exception', reason: 'timed out' } } };
    const rendered = renderBulkResponse(5, [upstream[1]!, own, upstream[0]!]).toString();
    expect(rendered).toBe(`{"took":5,"errors":true,"items":[${second},${JSON.stringify(own)},${first}]}`);
  });

  it("takes errors from the upstream items: false when Elasticsearch's answers said none failed", () => {
    const ok = parseBulkResponse(answer({ took: 1, errors: false, items: [{ index: { status: 201 } }] }), 1).items;
    const mixed = parseBulkResponse(answer({ took: 1, errors: true, items: [{ index: { status: 201 } }, { index: { status: 400, error: { type: 'mapper_parsing_exception' } } }] }), 2).items;
    expect(JSON.parse(renderBulkResponse(1, [...ok, mixed[0]!]).toString()).errors).toBe(false);
    expect(JSON.parse(renderBulkResponse(1, [...ok, ...mixed]).toString()).errors).toBe(true);
  });

  it('keeps an external version beyond 2^53 exact (parsing it as a number would round it)', () => {
    const item = '{"index":{"_id":"a","_version":1732780800123456789,"_seq_no":9007199254740993,"status":201}}';
    const parsed = parseBulkResponse(Buffer.from(`{"took":1,"errors":false,"items":[${item}]}`), 1);
    expect(renderBulkResponse(1, parsed.items).toString()).toBe(`{"took":1,"errors":false,"items":[${item}]}`);
  });

  it('renders an empty item list', () => {
    expect(JSON.parse(renderBulkResponse(0, []).toString())).toEqual({ took: 0, errors: false, items: [] });
  });
});
