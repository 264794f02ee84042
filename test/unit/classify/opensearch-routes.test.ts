import type { IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { classifyRoute } from '../../../src/classify/route-parser.js';

/*
 * OpenSearch as a target. The streaming bulk (OpenSearch 2.17+) answers item by item while the
 * request body still streams, so no lock can be taken for its documents before they are written:
 * it is refused. OpenSearch 1.x serves the typed routes of Elasticsearch 7 with no header at all.
 */

const PLAIN: IncomingHttpHeaders = { 'content-type': 'application/json' };

function refusal(method: string, url: string): ProxyError {
  try {
    classifyRoute(method, url, PLAIN);
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error(`${method} ${url} was not refused`);
}

describe('the OpenSearch streaming bulk', () => {
  it.each([
    ['POST', '/_bulk/stream'],
    ['PUT', '/_bulk/stream'],
    ['POST', '/logs/_bulk/stream'],
    ['PUT', '/logs/_bulk/stream?batch_size=10'],
    ['POST', '/_bulk/stream/'],
  ])('%s %s is refused with a client error', (method, url) => {
    expect(refusal(method, url).code).toBe('STREAMING_BULK_UNSUPPORTED');
  });
});

describe('OpenSearch 1.x typed writes, sent with no compatible-with header', () => {
  it.each([
    ['PUT', '/logs/event/1', { kind: 'single', op: 'index', index: 'logs', id: '1', typed: true }],
    ['POST', '/logs/event/1', { kind: 'single', op: 'index', index: 'logs', id: '1', typed: true }],
    ['DELETE', '/logs/event/1', { kind: 'single', op: 'delete', index: 'logs', id: '1', typed: true }],
    ['PUT', '/logs/event/1/_create', { kind: 'single', op: 'create', index: 'logs', id: '1', typed: true }],
    ['POST', '/logs/_doc/1/_create', { kind: 'single', op: 'create', index: 'logs', id: '1', typed: true }],
    ['POST', '/logs/event/1/_update', { kind: 'single', op: 'update', index: 'logs', id: '1', typed: true }],
    ['POST', '/logs/event/_bulk', { kind: 'bulk', defaultIndex: 'logs', typed: true }],
    ['PUT', '/logs/event/_bulk', { kind: 'bulk', defaultIndex: 'logs', typed: true }],
    ['POST', '/logs/event', { kind: 'auto-id', index: 'logs' }],
    ['POST', '/logs/event/_update_by_query', { kind: 'by-query', op: 'update_by_query', target: 'logs' }],
    // Whatever the URL's type, a bulk's items name their own and a by-query reaches the whole index.
    ['POST', '/logs/_x/_bulk', { kind: 'bulk', defaultIndex: 'logs', typed: true }],
    ['POST', '/logs/_x/_delete_by_query', { kind: 'by-query', op: 'delete_by_query', target: 'logs' }],
  ])('%s %s is a write', (method, url, expected) => {
    expect(classifyRoute(method, url, PLAIN)).toEqual(expected);
  });

  // OpenSearch 1.x refuses a mapping type starting with `_` other than `_doc`, so these are never
  // typed writes there, and Elasticsearch 8/9 serves them as other APIs.
  it.each([
    ['POST', '/logs/_search'],
    ['POST', '/logs/_refresh'],
    ['PUT', '/logs/_settings/x'],
    ['POST', '/logs/_fleet/_fleet_search'],
    ['POST', '/logs/_search/point_in_time'],
    ['POST', '/logs/_rollover/logs-000002'],
  ])('%s %s passes through', (method, url) => {
    expect(classifyRoute(method, url, PLAIN)).toEqual({ kind: 'passthrough' });
  });
});

describe('a path Elasticsearch and OpenSearch 1.x route to different writes', () => {
  it.each([
    ['POST', '/logs/_doc/_bulk'],
    ['PUT', '/logs/_doc/_bulk'],
    ['POST', '/logs/_doc/_update_by_query'],
    ['POST', '/logs/_doc/_delete_by_query'],
  ])('%s %s is refused: one lock cannot cover both', (method, url) => {
    expect(refusal(method, url).code).toBe('AMBIGUOUS_WRITE_ROUTE');
  });

  it('is the same write on both when the id is percent-encoded', () => {
    expect(classifyRoute('POST', '/logs/_doc/%5Fbulk', PLAIN)).toEqual({ kind: 'single', op: 'index', index: 'logs', id: '_bulk', typed: false });
  });
});

/**
 * OpenSearch 1.x's typed single-document writes, from its rules alone: a path of three segments
 * `/{index}/{type}/{id}` (or four, ending in `_create` or `_update`), an index not starting with
 * `_`, a type OpenSearch 1.x can store (no leading `_` unless `_doc`), and an id that is not one of
 * the literal segments of its other typed routes (`/{index}/{type}/_bulk` and the by-query routes).
 */
const TYPED_ROUTE_LITERALS = new Set(['_bulk', '_update_by_query', '_delete_by_query', '_search', '_count', '_mapping', '_mget', '_msearch', '_validate', '_termvectors', '_mtermvectors', '_explain', '_source']);

describe('OpenSearch 1.x typed writes, property', () => {
  const index = fc.stringMatching(/^[a-z0-9][a-z0-9.+-]{0,20}$/);
  const type = fc.oneof(fc.stringMatching(/^[a-zA-Z0-9][\w.-]{0,12}$/), fc.constant('_doc'));
  const id = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((d) => !TYPED_ROUTE_LITERALS.has(d));
  const write = fc.constantFrom(
    { method: 'PUT', suffix: '', op: 'index' },
    { method: 'POST', suffix: '', op: 'index' },
    { method: 'DELETE', suffix: '', op: 'delete' },
    { method: 'PUT', suffix: '/_create', op: 'create' },
    { method: 'POST', suffix: '/_create', op: 'create' },
    { method: 'POST', suffix: '/_update', op: 'update' },
  );

  it('locks every write OpenSearch 1.x would make, on the document it writes, with no header', () => {
    fc.assert(
      fc.property(index, type, id, write, (i, t, d, w) => {
        const url = `/${encodeURIComponent(i)}/${encodeURIComponent(t)}/${encodeURIComponent(d)}${w.suffix}`;
        const route = classifyRoute(w.method, url, PLAIN);
        expect(route).toMatchObject({ kind: 'single', op: w.op, index: i, id: d });
      }),
      { numRuns: 400 },
    );
  });
});
