import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { classifyRoute, type RouteClassification } from '../../../src/classify/route-parser.js';
import { ProxyError } from '../../../src/errors/proxy-error.js';

const PLAIN: IncomingHttpHeaders = { 'content-type': 'application/json' };
const COMPAT_7: IncomingHttpHeaders = {
  'content-type': 'application/vnd.elasticsearch+json; compatible-with=7',
  accept: 'application/vnd.elasticsearch+json; compatible-with=7',
};
const COMPAT_7_ACCEPT_ONLY: IncomingHttpHeaders = { accept: 'application/vnd.elasticsearch+json;compatible-with=7' };
const COMPAT_8: IncomingHttpHeaders = { 'content-type': 'application/vnd.elasticsearch+json;compatible-with=8' };

const single = (op: 'index' | 'create' | 'update' | 'delete', index: string, id: string, typed = false): RouteClassification => ({
  kind: 'single',
  op,
  index,
  id,
  typed,
});
const PASS: RouteClassification = { kind: 'passthrough' };

type Row = readonly [method: string, url: string, headers: IncomingHttpHeaders, expected: RouteClassification];

describe('classifyRoute: 8.x/9.x single-document writes', () => {
  const rows: Row[] = [
    ['PUT', '/products/_doc/42', PLAIN, single('index', 'products', '42')],
    ['POST', '/products/_doc/42', PLAIN, single('index', 'products', '42')],
    ['PUT', '/products/_doc/42?refresh=true&routing=a', PLAIN, single('index', 'products', '42')],
    ['PUT', '/products/_doc/42/', PLAIN, single('index', 'products', '42')],
    ['PUT', '/products/_doc/42///', PLAIN, single('index', 'products', '42')],
    ['PUT', '/products/_create/42', PLAIN, single('create', 'products', '42')],
    ['POST', '/products/_create/42', PLAIN, single('create', 'products', '42')],
    ['POST', '/products/_update/42', PLAIN, single('update', 'products', '42')],
    ['DELETE', '/products/_doc/42', PLAIN, single('delete', 'products', '42')],
    ['DELETE', '/products/_doc/42', {}, single('delete', 'products', '42')],
    ['put', '/products/_doc/42', PLAIN, single('index', 'products', '42')],
    // Encoded, `_bulk` stays an id for OpenSearch 1.x too (see the OpenSearch tests for the plain spelling).
    ['PUT', '/products/_doc/%5Fbulk', PLAIN, single('index', 'products', '_bulk')],
    ['PUT', '/products/_doc/_search', PLAIN, single('index', 'products', '_search')],
    ['PUT', '/.kibana/_doc/x', PLAIN, single('index', '.kibana', 'x')],
    ['PUT', '/logs-*/_doc/1', PLAIN, single('index', 'logs-*', '1')],
    ['PUT', '/*/_doc/1', PLAIN, single('index', '*', '1')],
    // compatible-with=8 is the current API: no typed routes, same write routes.
    ['PUT', '/products/_doc/42', COMPAT_8, single('index', 'products', '42')],
  ];
  it.each(rows)('%s %s', (method, url, headers, expected) => {
    expect(classifyRoute(method, url, headers)).toEqual(expected);
  });
});

describe('classifyRoute: percent-decoding of segments after splitting', () => {
  const rows: Row[] = [
    ['PUT', '/products/_doc/a%2Fb', PLAIN, single('index', 'products', 'a/b')],
    ['PUT', '/products/_doc/a%2fb', PLAIN, single('index', 'products', 'a/b')],
    ['PUT', '/products/_doc/100%25', PLAIN, single('index', 'products', '100%')],
    ['PUT', '/products/_doc/a+b', PLAIN, single('index', 'products', 'a+b')],
    ['PUT', '/products/_doc/a%2Bb', PLAIN, single('index', 'products', 'a+b')],
    ['PUT', '/products/_doc/a%20b', PLAIN, single('index', 'products', 'a b')],
    ['PUT', '/products/_doc/%C3%A9t%C3%A9', PLAIN, single('index', 'products', 'été')],
    ['PUT', '/products/_doc/%F0%9F%92%A9', PLAIN, single('index', 'products', '💩')],
    ['PUT', '/products/_doc/a%%b', PLAIN, single('index', 'products', 'a%b')],
    ['PUT', '/products/_doc/a%3Fb', PLAIN, single('index', 'products', 'a?b')],
    ['PUT', '/my%2Dindex/_doc/1', PLAIN, single('index', 'my-index', '1')],
    // `%5F` is decoded only after the route is chosen: literal segments compare raw, as in ES, so
    // Elasticsearch 8/9 have no route for it, while OpenSearch 1.x takes it for a typed write of type `_doc`.
    ['PUT', '/products/%5Fdoc/1', PLAIN, single('index', 'products', '1', true)],
    ['PUT', '/%5Fsecurity/_doc/1', PLAIN, PASS],
  ];
  it.each(rows)('%s %s', (method, url, headers, expected) => {
    expect(classifyRoute(method, url, headers)).toEqual(expected);
  });

  it.each([
    '/products/_doc/abc%',
    '/products/_doc/abc%4',
    '/products/_doc/abc%zz',
    '/products/_doc/%G1',
    '/products/_doc/%FF',
    '/products/_doc/%C3',
    '/products/_doc/%ED%A0%80',
    '/bad%index/_doc/1',
    '/products%/_bulk',
  ])('answers 400 naming the segment for %s', (url) => {
    const error = catchError(() => classifyRoute('PUT', url, PLAIN));
    expect(error).toBeInstanceOf(ProxyError);
    expect(error).toMatchObject({ code: 'BAD_REQUEST' });
    expect(String((error as ProxyError).message)).toMatch(/invalid percent-encoding in path segment \[/);
  });

  it('does not decode segments of GET/HEAD/OPTIONS requests, nor of paths no route matches', () => {
    expect(classifyRoute('GET', '/products/_doc/%FF', PLAIN)).toEqual(PASS);
    expect(classifyRoute('HEAD', '/products/_doc/%zz', PLAIN)).toEqual(PASS);
    expect(classifyRoute('POST', '/a/b/c/d/%zz', PLAIN)).toEqual(PASS);
  });

  it('fails like Elasticsearch when a route it walks through has a bad segment (ES: 405, here 400)', () => {
    expect(catchError(() => classifyRoute('POST', '/bad%zz/_search', PLAIN))).toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('refuses a write method with a request target that is not a path', () => {
    for (const url of ['http://es:9200/products/_doc/1', '*', 'products/_doc/1', '']) {
      expect(catchError(() => classifyRoute('PUT', url, PLAIN))).toMatchObject({ code: 'BAD_REQUEST' });
    }
    expect(classifyRoute('OPTIONS', '*', PLAIN)).toEqual(PASS);
  });
});

describe('classifyRoute: the 7.x typed routes of Elasticsearch 8 (compatible-with=7) and OpenSearch 1.x (any request)', () => {
  const rows: Row[] = [
    ['PUT', '/products/doc/42', COMPAT_7, single('index', 'products', '42', true)],
    ['POST', '/products/doc/42', COMPAT_7, single('index', 'products', '42', true)],
    ['PUT', '/products/doc/42', COMPAT_7_ACCEPT_ONLY, single('index', 'products', '42', true)],
    ['DELETE', '/products/doc/42', COMPAT_7_ACCEPT_ONLY, single('delete', 'products', '42', true)],
    ['PUT', '/products/doc/42/_create', COMPAT_7, single('create', 'products', '42', true)],
    ['POST', '/products/doc/42/_create', COMPAT_7, single('create', 'products', '42', true)],
    ['POST', '/products/doc/42/_update', COMPAT_7, single('update', 'products', '42', true)],
    ['POST', '/products/_doc/42/_update', COMPAT_7, single('update', 'products', '42', true)],
    ['PUT', '/products/_doc/42/_create', COMPAT_7, single('create', 'products', '42', true)],
    ['POST', '/products/doc', COMPAT_7, { kind: 'auto-id', index: 'products' }],
    ['POST', '/products/doc/_bulk', COMPAT_7, { kind: 'bulk', defaultIndex: 'products', typed: true }],
    ['PUT', '/products/doc/_bulk', COMPAT_7, { kind: 'bulk', defaultIndex: 'products', typed: true }],
    // Elasticsearch's root-wildcard trie pass finds /{index}/{type}/_bulk before /{index}/_doc/{id}.
    ['POST', '/products/_doc/_bulk', COMPAT_7, { kind: 'bulk', defaultIndex: 'products', typed: true }],
    ['POST', '/products/doc/_update_by_query', COMPAT_7, { kind: 'by-query', op: 'update_by_query', target: 'products' }],
    ['POST', '/products/doc/_delete_by_query', COMPAT_7, { kind: 'by-query', op: 'delete_by_query', target: 'products' }],
    // `/{index}/_refresh` has no child route, so ES routes this to the typed index handler.
    ['PUT', '/products/_refresh/1', COMPAT_7, single('index', 'products', '1', true)],
    ['POST', '/products/_cache/x', COMPAT_7, single('index', 'products', 'x', true)],
    ['PUT', '/products/doc/a%2Fb', COMPAT_7, single('index', 'products', 'a/b', true)],
    ['PUT', '/products/8/9', { 'content-type': 'application/vnd.elasticsearch+x-ndjson;compatible-with="7"' }, single('index', 'products', '9', true)],
    // Without compatible-with=7 Elasticsearch 8 has no handler (400/405), but OpenSearch 1.x writes them.
    ['PUT', '/products/doc/42', PLAIN, single('index', 'products', '42', true)],
    ['PUT', '/products/doc/42', COMPAT_8, single('index', 'products', '42', true)],
    ['PUT', '/products/doc/42', { accept: 'application/vnd.elasticsearch+json;compatible-with=70' }, single('index', 'products', '42', true)],
    ['DELETE', '/products/doc/42', PLAIN, single('delete', 'products', '42', true)],
    ['POST', '/products/doc/42/_update', PLAIN, single('update', 'products', '42', true)],
    ['POST', '/products/doc/_bulk', PLAIN, { kind: 'bulk', defaultIndex: 'products', typed: true }],
    ['POST', '/products/doc', PLAIN, { kind: 'auto-id', index: 'products' }],
    // A mapping type starting with `_` (other than `_doc`) is never a type OpenSearch 1.x writes.
    ['PUT', '/products/_refresh/1', PLAIN, PASS],
    ['DELETE', '/products/_cache/x', PLAIN, PASS],
  ];
  it.each(rows)('%s %s %j', (method, url, headers, expected) => {
    expect(classifyRoute(method, url, headers)).toEqual(expected);
  });
});

describe('classifyRoute: auto-id, bulk and by-query', () => {
  // `typed`: the bulk's action lines may name a `_type`, as OpenSearch 1.x takes on every bulk route.
  const rows: Row[] = [
    ['POST', '/products/_doc', PLAIN, { kind: 'auto-id', index: 'products' }],
    ['POST', '/products/_doc/', PLAIN, { kind: 'auto-id', index: 'products' }],
    ['POST', '/products/_doc?pipeline=p', PLAIN, { kind: 'auto-id', index: 'products' }],
    ['POST', '/_bulk', PLAIN, { kind: 'bulk', defaultIndex: null, typed: true }],
    ['PUT', '/_bulk', PLAIN, { kind: 'bulk', defaultIndex: null, typed: true }],
    ['POST', '/_bulk/', PLAIN, { kind: 'bulk', defaultIndex: null, typed: true }],
    ['POST', '/_bulk?refresh=wait_for', PLAIN, { kind: 'bulk', defaultIndex: null, typed: true }],
    ['POST', '/products/_bulk', PLAIN, { kind: 'bulk', defaultIndex: 'products', typed: true }],
    ['PUT', '/my%2Dproducts/_bulk', PLAIN, { kind: 'bulk', defaultIndex: 'my-products', typed: true }],
    // Items may carry their own _index, so a bulk keeps even an unusable default index.
    ['POST', '/_all/_bulk', PLAIN, { kind: 'bulk', defaultIndex: '_all', typed: true }],
    ['POST', '//_bulk', PLAIN, { kind: 'bulk', defaultIndex: '', typed: true }],
    ['POST', '/products/_update_by_query', PLAIN, { kind: 'by-query', op: 'update_by_query', target: 'products' }],
    ['POST', '/a,b/_delete_by_query?conflicts=proceed', PLAIN, { kind: 'by-query', op: 'delete_by_query', target: 'a,b' }],
    ['POST', '/_all/_update_by_query', PLAIN, { kind: 'by-query', op: 'update_by_query', target: '_all' }],
    ['POST', '/_reindex', PLAIN, { kind: 'by-query', op: 'reindex', target: null }],
    ['POST', '/_reindex?wait_for_completion=false', PLAIN, { kind: 'by-query', op: 'reindex', target: null }],
  ];
  it.each(rows)('%s %s', (method, url, headers, expected) => {
    expect(classifyRoute(method, url, headers)).toEqual(expected);
  });
});

describe('classifyRoute: everything else passes through', () => {
  const nonWrites: ReadonlyArray<readonly [string, string]> = [
    ['GET', '/products/_doc/42'],
    ['HEAD', '/products/_doc/42'],
    ['OPTIONS', '/products/_doc/42'],
    ['GET', '/_bulk'],
    ['PATCH', '/products/_doc/42'],
    ['TRACE', '/products/_doc/42'],
    ['GET', '/'],
    ['POST', '/'],
    ['PUT', '/products'],
    ['DELETE', '/products'],
    ['POST', '/products'],
    ['PUT', '/products/_doc'],
    ['DELETE', '/products/_create/42'],
    ['PUT', '/products/_update/42'],
    ['DELETE', '/products/_update/42'],
    ['GET', '/products/_update/42'],
    ['POST', '/products/_search'],
    ['POST', '/products/_search/template'],
    ['POST', '/products/_count'],
    ['POST', '/products/_refresh'],
    ['POST', '/products/_flush'],
    ['POST', '/products/_forcemerge'],
    ['POST', '/products/_open'],
    ['POST', '/products/_close'],
    ['PUT', '/products/_settings'],
    ['PUT', '/products/_settings/index.number_of_replicas'],
    ['PUT', '/products/_mapping'],
    ['POST', '/products/_mapping'],
    ['PUT', '/products/_alias/current'],
    ['POST', '/products/_alias/current'],
    ['DELETE', '/products/_alias/current'],
    ['PUT', '/products/_aliases/current'],
    ['PUT', '/products/_block/write'],
    ['POST', '/products/_cache/clear'],
    ['POST', '/products/_explain/42'],
    ['POST', '/products/_termvectors/42'],
    ['POST', '/products/_rollover/new-index'],
    ['PUT', '/products/_shrink/small'],
    ['POST', '/products/_split/big'],
    ['PUT', '/products/_clone/copy'],
    ['POST', '/products/_mget'],
    ['POST', '/products/_msearch'],
    ['POST', '/products/_pit'],
    ['POST', '/products/_validate/query'],
    ['POST', '/_search'],
    ['POST', '/_msearch'],
    ['POST', '/_mget'],
    ['POST', '/_count'],
    ['POST', '/_aliases'],
    ['PUT', '/_cluster/settings'],
    ['POST', '/_cluster/reroute'],
    ['GET', '/_cat/indices'],
    ['POST', '/_cat/indices/products'],
    ['PUT', '/_snapshot/repo'],
    ['PUT', '/_snapshot/repo/snap'],
    ['POST', '/_snapshot/repo/snap/_restore'],
    ['DELETE', '/_snapshot/repo/snap'],
    ['PUT', '/_security/user/bob'],
    ['POST', '/_security/user/bob/_password'],
    ['DELETE', '/_security/role/admin'],
    ['PUT', '/_ingest/pipeline/p'],
    ['PUT', '/_index_template/t'],
    ['PUT', '/_component_template/c'],
    ['PUT', '/_template/t'],
    ['PUT', '/_scripts/s'],
    ['PUT', '/_ilm/policy/p'],
    ['PUT', '/_data_stream/logs'],
    ['POST', '/_tasks/abc:1/_cancel'],
    ['POST', '/_reindex/abc:1/_rethrottle'],
    ['POST', '/_update_by_query/abc:1/_rethrottle'],
    ['POST', '/_delete_by_query/abc:1/_rethrottle'],
    ['DELETE', '/_pit'],
    ['DELETE', '/_search/scroll'],
    ['POST', '/_search/scroll'],
    ['POST', '/_sql'],
    ['POST', '/_query'],
    ['PUT', '/_doc/1/_doc'],
    ['PUT', '/_security/_doc/1'],
    ['PUT', '//_doc/1'],
    ['POST', '/_foo/_doc'],
    ['GET', '/products/_update_by_query'],
    ['PUT', '/products/_update_by_query'],
    ['PUT', '/_reindex'],
    ['POST', '/_reindex/x'],
    ['POST', '/products/_doc/1/extra/segments'],
    ['POST', '/products//_doc/1'],
    ['PUT', '/products/_doc//1'],
  ];
  it.each(nonWrites)('%s %s (plain)', (method, url) => {
    expect(classifyRoute(method, url, PLAIN)).toEqual(PASS);
  });

  // With compatible-with=7 the typed routes exist; these must still not be mistaken for them.
  const nonWritesUnderCompat7: ReadonlyArray<readonly [string, string]> = [
    ['GET', '/products/doc/42'],
    ['HEAD', '/products/doc/42'],
    ['PUT', '/products/_settings/x'],
    ['GET', '/products/_settings/x'],
    ['PUT', '/products/_alias/current'],
    ['PUT', '/products/_aliases/current'],
    ['POST', '/products/_cache/clear'],
    ['POST', '/products/_search/template'],
    ['POST', '/products/_refresh'],
    ['POST', '/products/_search'],
    ['POST', '/products/_explain/42'],
    ['PUT', '/products/_block/write'],
    ['POST', '/products/_rollover/new-index'],
    ['PUT', '/products/_update/42'],
    ['DELETE', '/products/_create/42'],
    ['PUT', '/_snapshot/repo/snap'],
    ['POST', '/_snapshot/repo/snap'],
    ['PUT', '/_security/user/bob'],
    ['DELETE', '/_security/user/bob'],
    ['PUT', '/_cluster/settings/x'],
    ['POST', '/_cat/indices/products'],
    ['PUT', '/_ingest/pipeline/p'],
    ['POST', '/products/_mapping/field/x'],
    ['GET', '/products/doc/42/_source'],
    // Literal segments of other APIs win over the typed routes' wildcards, as in Elasticsearch's trie.
    ['POST', '/products/_fleet/_fleet_search'],
    ['POST', '/products/_fleet/_fleet_msearch'],
    ['POST', '/products/_downsample/products-1h'],
    ['PUT', '/products/_fleet/_fleet_search'],
    ['POST', '/products/_async_search'],
    ['POST', '/products/_knn_search'],
  ];
  it.each(nonWritesUnderCompat7)('%s %s (compatible-with=7)', (method, url) => {
    expect(classifyRoute(method, url, COMPAT_7)).toEqual(PASS);
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
