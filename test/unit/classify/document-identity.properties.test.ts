import type { IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBulkBody } from '../../../src/classify/bulk-parser.js';
import { documentKey, idTooLongMessage } from '../../../src/classify/document-id.js';
import { ELASTICSEARCH_ROUTES } from '../../../src/classify/es-routes.js';
import { classifyRoute } from '../../../src/classify/route-parser.js';
import type { LockKey } from '../../../src/lock/lock-engine.js';
import { refusesId, restApiVersion, storedIdBytes } from '../../support/elasticsearch-rules.js';

/**
 * The proxy against the reference model of Elasticsearch's rules (test/support/elasticsearch-rules.ts):
 * (a) requests Elasticsearch applies to one document get one lock key, however the id and the
 * headers are spelled; (b) a document write Elasticsearch applies is never a pass-through.
 */
const RUNS = { numRuns: 300 };

type Action = 'index' | 'create' | 'update' | 'delete';
/** What the proxy does with a request: the keys it locks, refuses it, or passes it through unlocked. */
type ProxyView = { readonly keys: readonly LockKey[] } | 'refused' | 'unlocked';

function proxyView(method: string, url: string, headers: IncomingHttpHeaders, body: string): ProxyView {
  const route = classifyRoute(method, url, headers);
  if (route.kind === 'single') return idTooLongMessage(route.op, route.id) === null ? { keys: [documentKey(route.index, route.id)] } : 'refused';
  if (route.kind !== 'bulk') return 'unlocked';
  const items = parseBulkBody(Buffer.from(body), route.defaultIndex, { allowTypeMetadata: route.typed });
  if (items.some((item) => item.id !== null && idTooLongMessage(item.action, item.id) !== null)) return 'refused';
  return { keys: items.flatMap((item) => (item.id === null ? [] : [documentKey(item.index, item.id)])) };
}

// ---- ids and their spellings -------------------------------------------------------------------

const LONE = ['\ud800', '\udbff', '\udc00', '\udfff'];
const idPiece = fc.oneof(
  fc.constantFrom(...LONE, '\ufffd', '😀', 'é', '€', 'a', 'Z', '0', '/', '%', '+', ' ', '"', '\\', '?', '#', '\u0001', '_'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }),
);
const shortId = fc.array(idPiece, { minLength: 1, maxLength: 12 }).map((pieces) => pieces.join(''));
/** Ids around the 512-byte limit, where Java's count and the stored size part ways. */
const longId = fc
  .tuple(fc.constantFrom('\ud800', '\udc00', 'x', 'é', '€', '😀'), fc.integer({ min: 120, max: 520 }), shortId)
  .map(([unit, times, tail]) => unit.repeat(times) + tail);
const anyId = fc.oneof({ weight: 3, arbitrary: shortId }, { weight: 1, arbitrary: longId });

/** Another id Lucene stores as the same bytes: each unpaired surrogate swapped for another, or for U+FFFD. */
function sameStoredId(id: string, picks: readonly number[]): string {
  let n = 0;
  return [...id].map((char) => (/^[\ud800-\udfff]$/.test(char) ? [...LONE, '\ufffd'][(picks[n++ % Math.max(1, picks.length)] ?? 0) % 5]! : char)).join('');
}

/** `id` as a JSON string, each character raw or escaped at random (an unpaired surrogate can only be escaped). */
function jsonString(id: string, choices: readonly number[]): string {
  let n = 0;
  const body = [...id].map((char) => {
    const pick = choices[n++ % Math.max(1, choices.length)] ?? 0;
    const units = [...Array(char.length).keys()].map((i) => char.charCodeAt(i));
    const escaped = units.map((unit) => `\\u${unit.toString(16).padStart(4, '0')}`).join('');
    if (/^[\ud800-\udfff]$/.test(char) || char < ' ' || pick % 3 === 0) return pick % 2 === 0 ? escaped : escaped.toUpperCase().replaceAll('\\U', '\\u');
    if (char === '"' || char === '\\') return `\\${char}`;
    if (char === '/' && pick % 3 === 1) return '\\/';
    return char;
  });
  return `"${body.join('')}"`;
}

/** The path segment Elasticsearch decodes to the stored id: every byte percent-encoded, or left raw where that is safe. */
function pathSegment(id: string, choices: readonly number[]): string {
  return [...storedIdBytes(id)]
    .map((byte, n) => {
      const pick = choices[n % Math.max(1, choices.length)] ?? 0;
      const safe = /[A-Za-z0-9\-._~!$&'()*+,;=:@]/.test(String.fromCharCode(byte));
      if (safe && pick % 2 === 0) return String.fromCharCode(byte);
      const hex = byte.toString(16).padStart(2, '0');
      return `%${pick % 3 === 0 ? hex.toUpperCase() : hex}`;
    })
    .join('');
}

// ---- header spellings --------------------------------------------------------------------------

const mediaTypeName = fc.constantFrom(
  'application/vnd.elasticsearch+json',
  'APPLICATION/VND.ELASTICSEARCH+JSON',
  'application/vnd.elasticsearch+x-ndjson',
  'application/json',
  'text/plain',
);
const versionText = fc.constantFrom('7', '07', '007', '+7', '0000007', '8', '08', '9', '009', '6', '70', '-7', '"7"', 'x', '', '300');
const parameterName = fc.constantFrom('compatible-with', 'COMPATIBLE-WITH', 'Compatible-With');
const separator = fc.constantFrom(';', '; ', ' ;', '\t;  ', ';;');
const parameter = fc.oneof(
  fc.tuple(parameterName, versionText, fc.constantFrom('=', '=', ' =', '= ')).map(([name, value, eq]) => `${name}${eq}${value}`),
  fc.constantFrom('charset=utf-8', 'charset=UTF-8', 'q=1'),
);
const mediaTypeHeader = fc.option(
  fc.tuple(mediaTypeName, fc.array(fc.tuple(separator, parameter), { maxLength: 3 }), fc.constantFrom('', ' ', ', text/plain')).map(
    ([type, parameters, tail]) => `${type}${parameters.map(([sep, p]) => `${sep}${p}`).join('')}${tail}`,
  ),
  { nil: undefined, freq: 4 },
);
const headerPair = fc.record({ accept: mediaTypeHeader, contentType: mediaTypeHeader });

function headersOf({ accept, contentType }: { accept: string | undefined; contentType: string | undefined }): IncomingHttpHeaders {
  return { ...(accept === undefined ? {} : { accept }), ...(contentType === undefined ? {} : { 'content-type': contentType }) };
}

const valuesOf = (value: string | undefined): string[] => (value === undefined ? [] : [value]);

/** Header pairs that Elasticsearch 8 serves with a body in REST API version 7, in every spelling the grammar has. */
const compatible7Pair = headerPair.filter(({ accept, contentType }) => {
  const version = restApiVersion(valuesOf(accept), valuesOf(contentType), true, 8);
  return !version.refused && version.major === 7;
});

// ---- properties --------------------------------------------------------------------------------

/** What the model says each form writes: the stored bytes of the document, or that Elasticsearch refuses it. */
function expectKeyOfStoredDocument(view: ProxyView, index: string, action: Action, id: string): void {
  if (refusesId(action, id)) {
    expect(view).toBe('refused');
    return;
  }
  expect(view).not.toBe('unlocked');
  expect(view).not.toBe('refused');
  const { keys } = view as { keys: readonly LockKey[] };
  expect(keys).toHaveLength(1);
  expect(keys[0]!.index).toBe(index);
  expect(Buffer.from(keys[0]!.id, 'utf8').equals(storedIdBytes(id))).toBe(true);
  // Well-formed: the key round-trips through UTF-8, so equal stored bytes are equal keys.
  expect(Buffer.from(keys[0]!.id, 'utf8').toString('utf8')).toBe(keys[0]!.id);
}

const action = fc.constantFrom<Action>('index', 'create', 'update', 'delete');

describe('lock keys against the reference model of Elasticsearch', () => {
  it('(a) keys every spelling of an id by the document Lucene stores: bulk escapes, path encodings, swapped surrogates', () => {
    fc.assert(
      fc.property(anyId, action, fc.array(fc.nat(), { maxLength: 16 }), fc.array(fc.nat(5), { maxLength: 8 }), (id, act, choices, picks) => {
        const twin = sameStoredId(id, picks);
        const bulkView = (spelled: string): ProxyView => {
          const line = act === 'delete' ? '' : act === 'update' ? '{"doc":{}}\n' : '{}\n';
          return proxyView('POST', '/_bulk', { 'content-type': 'application/x-ndjson' }, `{"${act}":{"_index":"idx","_id":${jsonString(spelled, choices)}}}\n${line}`);
        };
        expectKeyOfStoredDocument(bulkView(id), 'idx', act, id);
        expectKeyOfStoredDocument(bulkView(twin), 'idx', act, twin);
        const [method, route] = { index: ['PUT', '_doc'], create: ['PUT', '_create'], update: ['POST', '_update'], delete: ['DELETE', '_doc'] }[act];
        // A path can only carry the stored form (percent-decoding yields no unpaired surrogate).
        const pathView = proxyView(method!, `/idx/${route}/${pathSegment(id, choices)}`, { 'content-type': 'application/json' }, '{}');
        expectKeyOfStoredDocument(pathView, 'idx', act, storedIdBytes(id).toString('utf8'));
        // Swapping can pair a high surrogate with a low one: only twins Lucene stores alike must share the key.
        if (storedIdBytes(twin).equals(storedIdBytes(id)) && !refusesId(act, id) && !refusesId(act, twin)) expect(bulkView(twin)).toEqual(bulkView(id));
      }),
      RUNS,
    );
  });

  it('(a) keys a typed write with any compatible-with=7 spelling as the same write on _doc', () => {
    fc.assert(
      fc.property(shortId, compatible7Pair, fc.constantFrom('t', 'doc', '_doc'), fc.array(fc.nat(), { maxLength: 8 }), (id, pair, type, choices) => {
        const segment = pathSegment(id, choices);
        const stored = storedIdBytes(id).toString('utf8');
        expectKeyOfStoredDocument(proxyView('PUT', `/idx/${type}/${segment}`, headersOf(pair), '{}'), 'idx', 'index', stored);
        expectKeyOfStoredDocument(proxyView('DELETE', `/idx/${type}/${segment}`, headersOf(pair), ''), 'idx', 'delete', stored);
        const bulk = `{"index":{"_id":${jsonString(id, choices)}}}\n{}\n`;
        expectKeyOfStoredDocument(proxyView('POST', `/idx/${type}/_bulk`, headersOf(pair), bulk), 'idx', 'index', id);
        expect(proxyView('PUT', `/idx/${type}/${segment}`, headersOf(pair), '{}')).toEqual(proxyView('PUT', `/idx/_doc/${segment}`, {}, '{}'));
      }),
      { numRuns: 150 },
    );
  });

  it('(b) never passes through a document write Elasticsearch 8 or 9 applies, whatever the headers say', () => {
    fc.assert(
      fc.property(headerPair, fc.boolean(), fc.constantFrom(8, 9), (pair, hasContent, current) => {
        const version = restApiVersion(valuesOf(pair.accept), valuesOf(pair.contentType), hasContent, current);
        if (version.refused) return;
        const headers = headersOf(pair);
        const body = hasContent ? '{}' : '';
        // Every served version has the current write routes (a version-7 request falls back to them).
        expectKeyOfStoredDocument(proxyView('PUT', '/idx/_doc/1', headers, body), 'idx', 'index', '1');
        expectKeyOfStoredDocument(proxyView('DELETE', '/idx/_doc/1', headers, body), 'idx', 'delete', '1');
        if (version.major === 7) {
          expectKeyOfStoredDocument(proxyView('PUT', '/idx/t/1', headers, body), 'idx', 'index', '1');
          expectKeyOfStoredDocument(proxyView('DELETE', '/idx/t/1', headers, body), 'idx', 'delete', '1');
          expectKeyOfStoredDocument(proxyView('POST', '/idx/t/_bulk', headers, '{"delete":{"_id":"1"}}\n'), 'idx', 'delete', '1');
        } else {
          // No typed route in Elasticsearch's current API, but OpenSearch 1.x serves it to every request:
          // the proxy, not knowing which it fronts, locks it as the document either would write.
          expectKeyOfStoredDocument(proxyView('PUT', '/idx/t/1', headers, body), 'idx', 'index', '1');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('matches the typed table only to add writes: where the current table has a write, version 7 has one, and the same delete', () => {
    const segment = fc.constantFrom('idx', '_doc', '_create', '_update', '_bulk', '_source', 't', '1', '', '_update_by_query', '_refresh', '_search');
    fc.assert(
      fc.property(fc.constantFrom('PUT', 'POST', 'DELETE'), fc.array(segment, { minLength: 1, maxLength: 4 }), (method, segments) => {
        const path = `/${segments.join('/')}`;
        const current = ELASTICSEARCH_ROUTES.resolve(method, path, 'current');
        if (!current.matched || current.handler.kind === 'other') return;
        const typed = ELASTICSEARCH_ROUTES.resolve(method, path, 'v7');
        expect(typed.matched && typed.handler.kind !== 'other').toBe(true);
        // A body-less request can only delete: the one case a v7 answer might meet a current request.
        if (method === 'DELETE') expect(typed).toEqual(current);
      }),
      { numRuns: 2000 },
    );
  });
});
