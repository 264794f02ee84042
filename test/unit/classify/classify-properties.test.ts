import type { IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBulkBody, sliceBulkBody, type BulkAction } from '../../../src/classify/bulk-parser.js';
import { classifyRoute } from '../../../src/classify/route-parser.js';
import { statusFor } from '../../../src/errors/error-codes.js';
import { ProxyError } from '../../../src/errors/proxy-error.js';

const RUNS = { numRuns: 400 };

/** Any outcome but a ProxyError with a 4xx status is a bug. */
function expectOnlyClientErrors(run: () => unknown): void {
  try {
    run();
  } catch (error) {
    if (!(error instanceof ProxyError)) throw error;
    const status = statusFor(error.code);
    expect(status, `${error.code}: ${error.message}`).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
  }
}

/** No lone surrogates (they cannot be percent-encoded as UTF-8). ES2024's String#isWellFormed is not in our lib. */
function isWellFormed(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

const wellFormed = (unit: 'binary' | 'grapheme') => fc.string({ unit, minLength: 1, maxLength: 80 }).filter(isWellFormed);

/** Every UTF-8 byte as `%XX`, hex digits in random case: Elasticsearch must decode it to the same id. */
function encodeEveryByte(text: string, upper: boolean): string {
  return [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).map((e) => (upper ? e.toUpperCase() : e)).join('');
}

describe('classifyRoute under hostile input', () => {
  const segment = fc.oneof(
    fc.constantFrom('_doc', '_create', '_update', '_bulk', '_update_by_query', '_delete_by_query', '_reindex', '_search', '_settings', '_alias', '_snapshot', '_cat', '', '.', '..', '*', 'idx', 'doc'),
    fc.constantFrom('%', '%2', '%zz', '%2F', '%25', '%%', '%FF', '%C3%A9', '%ED%A0%80', '+', '%2B', 'a?b', '#'),
    fc.string({ unit: 'binary', maxLength: 12 }),
  );
  const path = fc.tuple(fc.array(segment, { maxLength: 6 }), fc.constantFrom('', '/', '//', '?refresh=true', '?a=%zz'), fc.constantFrom('/', '', 'http://h'))
    .map(([segments, tail, prefix]) => `${prefix}${segments.join('/')}${tail}`);
  const method = fc.oneof(fc.constantFrom('GET', 'HEAD', 'OPTIONS', 'PUT', 'POST', 'DELETE', 'PATCH', 'put', 'Post'), fc.string({ maxLength: 8 }));
  const mediaType = fc.constantFrom(
    undefined,
    'application/json',
    'application/vnd.elasticsearch+json;compatible-with=7',
    'application/vnd.elasticsearch+json;compatible-with=8',
    'text/plain',
    ';;;',
    'compatible-with=7',
  );
  const headers = fc.record({ accept: mediaType, 'content-type': mediaType }).map((h): IncomingHttpHeaders => {
    const result: IncomingHttpHeaders = {};
    if (h.accept !== undefined) result.accept = h.accept;
    if (h['content-type'] !== undefined) result['content-type'] = h['content-type'];
    return result;
  });

  it('never throws anything but a 4xx ProxyError, and never yields an unusable single-write index', () => {
    fc.assert(
      fc.property(method, path, headers, (m, p, h) => {
        expectOnlyClientErrors(() => {
          const route = classifyRoute(m, p, h);
          if (route.kind === 'single' || route.kind === 'auto-id') {
            expect(route.index.length).toBeGreaterThan(0);
            expect(route.index.startsWith('_')).toBe(false);
          }
          if (!['PUT', 'POST', 'DELETE'].includes(m.toUpperCase())) expect(route.kind).toBe('passthrough');
        });
      }),
      { numRuns: 3000 },
    );
  });

  it('round-trips ids of every length and character class through percent-encoding', () => {
    const OPENSEARCH_1_TYPED_API_NAMES = new Set(['_bulk', '_update_by_query', '_delete_by_query']);
    const id = fc.oneof(wellFormed('binary'), wellFormed('grapheme'), fc.string({ minLength: 1, maxLength: 600 }), fc.constantFrom('/', '%', '+', '?', '#', ' ', '..', '_bulk', '%2F', 'a/b/c', '💩', '\u0000'));
    const index = fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/);
    fc.assert(
      fc.property(index, id, fc.constantFrom('component', 'lower', 'upper'), fc.constantFrom('PUT', 'POST', 'DELETE'), (i, d, style, m) => {
        const encoded = style === 'component' ? encodeURIComponent(d) : encodeEveryByte(d, style === 'upper');
        const classify = (): unknown => classifyRoute(m, `/${encodeURIComponent(i)}/_doc/${encoded}?refresh=false`, { 'content-type': 'application/json' });
        if (m !== 'DELETE' && OPENSEARCH_1_TYPED_API_NAMES.has(encoded)) {
          // Unencoded, OpenSearch 1.x routes these to its typed bulk or by-query of type `_doc`.
          expect(classify).toThrow(expect.objectContaining({ code: 'AMBIGUOUS_WRITE_ROUTE' }));
          return;
        }
        expect(classify()).toEqual({ kind: 'single', op: m === 'DELETE' ? 'delete' : 'index', index: i, id: d, typed: false });
      }),
      RUNS,
    );
  });

  it('round-trips ids through the typed routes too (compatible-with=7)', () => {
    const reserved = new Set(['_bulk', '_update_by_query', '_delete_by_query']);
    const id = fc.oneof(wellFormed('binary'), wellFormed('grapheme')).filter((d) => !reserved.has(d));
    fc.assert(
      fc.property(id, fc.constantFrom('_create', '_update', ''), (d, suffix) => {
        const url = `/idx/type/${encodeURIComponent(d)}${suffix === '' ? '' : `/${suffix}`}`;
        const op = suffix === '' ? 'index' : suffix === '_create' ? 'create' : 'update';
        const route = classifyRoute('POST', url, { accept: 'application/vnd.elasticsearch+json;compatible-with=7' });
        expect(route).toEqual({ kind: 'single', op, index: 'idx', id: d, typed: true });
      }),
      RUNS,
    );
  });
});

interface ModelItem {
  readonly action: BulkAction;
  readonly index: string | null;
  readonly id: string | null;
  readonly idStyle: 'string' | 'raw';
  readonly extra: Readonly<Record<string, string | number | boolean | null>>;
  readonly source: string;
}

const modelItem: fc.Arbitrary<ModelItem> = fc
  .record({
    action: fc.constantFrom<BulkAction>('index', 'create', 'update', 'delete'),
    index: fc.option(fc.string({ minLength: 1, maxLength: 20 }).filter(isWellFormed), { nil: null }),
    id: fc.option(fc.oneof(fc.string({ maxLength: 40 }).filter(isWellFormed), fc.integer().map(String)), { nil: null }),
    numericId: fc.boolean(),
    extra: fc.dictionary(fc.constantFrom('routing', 'pipeline', 'version', 'if_seq_no', 'require_alias', 'unknown_but_null'), fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.boolean()), { maxKeys: 3 }),
    source: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  })
  .map(({ action, index, id, numericId, extra, source }) => {
    // delete/update need an id; a numeric id is written as a JSON number.
    const effectiveId = (action === 'delete' || action === 'update') && (id === null || id === '') ? 'x' : id;
    const isNumber = effectiveId !== null && numericId && /^-?(0|[1-9][0-9]*)$/.test(effectiveId);
    const cleanExtra = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, k === 'unknown_but_null' ? null : v]));
    return { action, index, id: effectiveId, idStyle: isNumber ? 'raw' : 'string', extra: cleanExtra, source } as const;
  });

function renderItem(item: ModelItem, crlf: boolean, spaced: boolean): string {
  const meta: string[] = [];
  if (item.index !== null) meta.push(`"_index":${JSON.stringify(item.index)}`);
  if (item.id !== null) meta.push(`"_id":${item.idStyle === 'raw' ? item.id : JSON.stringify(item.id)}`);
  for (const [key, value] of Object.entries(item.extra)) meta.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
  const sep = spaced ? ' ' : '';
  const eol = crlf ? '\r\n' : '\n';
  const action = `{${sep}"${item.action}":${sep}{${meta.join(`,${sep}`)}}${sep}}`;
  return item.action === 'delete' ? `${action}${eol}` : `${action}${eol}${item.source}${eol}`;
}

describe('parseBulkBody against a model', () => {
  it('parses generated valid bodies to exactly the model, and slices re-parse identically', () => {
    fc.assert(
      fc.property(
        fc.array(modelItem, { minLength: 1, maxLength: 25 }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.nat(30), { maxLength: 4 }),
        (items, crlf, spaced, blankAfter) => {
          const text = items.map((item, i) => renderItem(item, crlf, spaced) + (blankAfter.includes(i) ? '\n' : '')).join('');
          const raw = Buffer.from(text, 'utf8');
          const parsed = parseBulkBody(raw, 'default-index');
          expect(parsed.map(({ action, index, id, position }) => ({ action, index, id, position }))).toEqual(
            items.map((item, position) => ({ action: item.action, index: item.index ?? 'default-index', id: item.id, position })),
          );
          parsed.forEach((item, i) => {
            const model = items[i];
            if (model === undefined) throw new Error('unreachable');
            if (model.action === 'delete') expect(item.sourceLineStart).toBeNull();
            else expect(raw.toString('utf8', item.sourceLineStart ?? 0, item.sourceLineEnd ?? 0).replace(/\r$/, '')).toBe(model.source);
          });
          const odd = parsed.filter((item) => item.position % 2 === 1);
          if (odd.length > 0) {
            const reparsed = parseBulkBody(sliceBulkBody(raw, odd), 'default-index');
            expect(reparsed.map(({ action, index, id }) => ({ action, index, id }))).toEqual(odd.map(({ action, index, id }) => ({ action, index, id })));
          }
        },
      ),
      RUNS,
    );
  });

  it('answers mutated, truncated or garbage bodies with a parse or a 4xx ProxyError, nothing else', () => {
    const validBody = fc.array(modelItem, { minLength: 1, maxLength: 8 }).map((items) => Buffer.from(items.map((item) => renderItem(item, false, false)).join('')));
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 6 }) }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 5 }) }),
    );
    const mutated = fc.tuple(validBody, fc.array(mutation, { minLength: 1, maxLength: 4 })).map(([body, mutations]) => {
      let bytes = Buffer.from(body);
      for (const m of mutations) {
        const at = bytes.length === 0 ? 0 : m.at % (bytes.length + 1);
        if (m.kind === 'truncate') bytes = bytes.subarray(0, at);
        if (m.kind === 'flip' && at < bytes.length) bytes[at] = m.byte;
        if (m.kind === 'insert') bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(m.bytes), bytes.subarray(at)]);
        if (m.kind === 'delete') bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.length)]);
      }
      return bytes;
    });
    const garbage = fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
      fc.string({ unit: 'binary', maxLength: 200 }).map((s) => Buffer.from(s)),
      fc.jsonValue().map((value) => Buffer.from(`${JSON.stringify(value)}\n`)),
    );
    fc.assert(
      fc.property(fc.oneof(mutated, garbage), fc.option(fc.string({ maxLength: 5 }), { nil: null }), (raw, defaultIndex) => {
        expectOnlyClientErrors(() => {
          for (const item of parseBulkBody(raw, defaultIndex)) {
            expect(raw.subarray(item.actionLineStart, item.actionLineEnd).includes(0x0a)).toBe(false);
            expect(raw[item.actionLineEnd]).toBe(0x0a);
            if (item.sourceLineEnd !== null) expect(raw[item.sourceLineEnd]).toBe(0x0a);
          }
        });
      }),
      { numRuns: 2000 },
    );
  });

  it('survives huge lines and deep nesting with a 4xx or a parse', () => {
    const huge = Buffer.from(`{"index":{"_index":"a","_id":"${'x'.repeat(2_000_000)}"}}\n{}\n`);
    expect(parseBulkBody(huge, null)[0]?.id).toHaveLength(2_000_000);
    const deepSource = Buffer.from(`{"index":{"_index":"a"}}\n${'['.repeat(100_000)}\n`);
    expect(parseBulkBody(deepSource, null)).toHaveLength(1);
    const deepMeta = Buffer.from(`{"index":{"_index":"a","dynamic_templates":${'{"a":'.repeat(100_000)}\n{}\n`);
    expectOnlyClientErrors(() => parseBulkBody(deepMeta, null));
  });
});
