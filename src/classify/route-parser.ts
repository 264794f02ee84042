import type { IncomingHttpHeaders } from 'node:http';
import { ProxyError } from '../errors/proxy-error.js';
import { routeVersionOf } from './compatibility.js';
import { ELASTICSEARCH_ROUTES, type RouteHandler } from './es-routes.js';
import { isPossibleOpenSearch1Type, OPENSEARCH_ROUTES } from './opensearch-routes.js';
import { rawPathOf } from './path-segments.js';

export type SingleWriteOp = 'index' | 'create' | 'update' | 'delete';
export type ByQueryOp = 'update_by_query' | 'delete_by_query' | 'reindex';

export type RouteClassification =
  | { readonly kind: 'passthrough' }
  | { readonly kind: 'single'; readonly op: SingleWriteOp; readonly index: string; readonly id: string; readonly typed: boolean }
  | { readonly kind: 'auto-id'; readonly index: string }
  | { readonly kind: 'bulk'; readonly defaultIndex: string | null; readonly typed: boolean }
  | { readonly kind: 'by-query'; readonly op: ByQueryOp; readonly target: string | null };

const PASSTHROUGH: RouteClassification = Object.freeze({ kind: 'passthrough' });

/** Only these methods have write routes; GET/HEAD/OPTIONS and the rest never write. */
const WRITE_METHODS = new Set(['PUT', 'POST', 'DELETE']);

/**
 * Recognises a document write the way Elasticsearch 8.x/9.x and OpenSearch 1.x to 3.x route it.
 *
 * - The raw path (before `?`) is split on `/` and only then are the route's wildcard segments
 *   percent-decoded (`%2F` stays inside an id). Splitting follows Elasticsearch's PathTrie: any
 *   number of trailing slashes is ignored, an interior `//` yields an empty segment that matches a
 *   wildcard (`POST //_bulk` is a bulk with an empty default index, exactly as Elasticsearch sees it).
 * - Route choice replays Elasticsearch's trie rules over the write routes and the non-write routes
 *   that share their shape, so `PUT /idx/_settings/x` is not a write.
 * - The 7.x typed routes apply when the request asks for REST API version 7 as Elasticsearch reads
 *   Accept and Content-Type (`routeVersionOf`): Elasticsearch 8 registers them for version 7 only,
 *   9.x not at all; OpenSearch 1.x serves them to every request. The request is read both ways and
 *   is a write when either cluster would write (`eitherWrite`); OpenSearch's streaming bulk is
 *   refused (STREAMING_BULK_UNSUPPORTED), and so is a path the two route to different writes
 *   (`/idx/_doc/_bulk`: AMBIGUOUS_WRITE_ROUTE).
 * - A single-document or auto-id write whose index is empty or starts with `_` is passed through:
 *   Elasticsearch refuses such index names (and `/_snapshot/r/s`, `/_security/...` are APIs). Bulk
 *   routes keep such a default index: their items may name a real `_index` of their own.
 *
 * Throws ProxyError BAD_REQUEST (400) for an invalid percent-encoding in a segment the chosen write
 * route reads, and for a write method with a request target that is not origin-form (`/...`).
 */
export function classifyRoute(method: string, rawUrl: string, headers: IncomingHttpHeaders): RouteClassification {
  const upperMethod = method.toUpperCase();
  if (!WRITE_METHODS.has(upperMethod)) return PASSTHROUGH;
  const rawPath = rawPathOf(rawUrl);
  if (!rawPath.startsWith('/')) {
    // Absolute-form or `*` targets: a forwarder might normalise them into a write path we never classified.
    throw new ProxyError('BAD_REQUEST', `request target [${rawUrl}] must be an absolute path starting with [/]`);
  }
  const version = routeVersionOf(headers);
  const openSearch = openSearchClassification(upperMethod, rawPath, rawUrl);
  const resolution = ELASTICSEARCH_ROUTES.resolve(upperMethod, rawPath, version);
  const elasticsearch = resolution.matched ? classificationOf(resolution.handler, resolution.params) : PASSTHROUGH;
  return eitherWrite(elasticsearch, openSearch, `${upperMethod} ${rawUrl}`);
}

/**
 * The write either cluster would make of the request. Where both would write, but not the same
 * documents, no single lock covers the request: it is refused rather than forwarded half-locked.
 */
function eitherWrite(elasticsearch: RouteClassification, openSearch: RouteClassification, request: string): RouteClassification {
  if (openSearch.kind === 'passthrough') return elasticsearch;
  if (elasticsearch.kind === 'passthrough') return openSearch;
  if (JSON.stringify(untyped(elasticsearch)) === JSON.stringify(untyped(openSearch))) {
    // A bulk takes `_type` in its action lines where either does (OpenSearch 1.x on every bulk route).
    return elasticsearch.kind === 'bulk' && openSearch.kind === 'bulk' ? { ...elasticsearch, typed: elasticsearch.typed || openSearch.typed } : elasticsearch;
  }
  throw new ProxyError(
    'AMBIGUOUS_WRITE_ROUTE',
    `[${request}] is ${describe(elasticsearch)} on Elasticsearch but ${describe(openSearch)} on OpenSearch 1.x, and one lock cannot cover both; ` +
      'send bulks to [/{index}/_bulk] and percent-encode an id that is an API name (such as [%5Fbulk])',
  );
}

function untyped(route: RouteClassification): RouteClassification {
  return 'typed' in route ? { ...route, typed: false } : route;
}

function describe(route: RouteClassification): string {
  switch (route.kind) {
    case 'single':
      return `a write ([${route.op}]) of document [${route.id}] in [${route.index}]`;
    case 'auto-id':
      return `a write of a new document in [${route.index}]`;
    case 'bulk':
      return 'a bulk';
    case 'by-query':
      return `a [${route.op}]`;
    case 'passthrough':
      return 'no write';
  }
}

/**
 * The same request as OpenSearch routes it. The proxy does not know which of the two it fronts, so
 * a request is a write when either would write it: locking a request one of them then refuses
 * costs a lock, passing a write through unlocked would break the serialization.
 */
function openSearchClassification(method: string, rawPath: string, rawUrl: string): RouteClassification {
  const resolution = OPENSEARCH_ROUTES.resolve(method, rawPath, 'current');
  if (!resolution.matched) return PASSTHROUGH;
  if (resolution.handler.kind === 'streaming-bulk') {
    throw new ProxyError(
      'STREAMING_BULK_UNSUPPORTED',
      `[${method} ${rawUrl}] is OpenSearch's streaming bulk, whose items cannot be locked before they are written; send them to [/_bulk] instead`,
    );
  }
  // A single write under a type OpenSearch 1.x cannot store writes nothing; a bulk's items and a
  // by-query's documents may still be written (their own `_type`, the whole index), so they stay.
  const type = resolution.params.get('type');
  const single = resolution.handler.kind === 'single' || resolution.handler.kind === 'auto-id';
  if (single && type !== undefined && !isPossibleOpenSearch1Type(type)) return PASSTHROUGH;
  return classificationOf(resolution.handler, resolution.params);
}

function classificationOf(handler: RouteHandler, params: ReadonlyMap<string, string>): RouteClassification {
  const index = params.get('index') ?? null;
  switch (handler.kind) {
    case 'single': {
      const id = params.get('id');
      if (index === null || id === undefined || !isPossibleIndexName(index)) return PASSTHROUGH;
      return { kind: 'single', op: handler.op, index, id, typed: handler.typed };
    }
    case 'auto-id':
      return index === null || !isPossibleIndexName(index) ? PASSTHROUGH : { kind: 'auto-id', index };
    case 'bulk':
      return { kind: 'bulk', defaultIndex: index, typed: handler.typed };
    case 'by-query':
      return { kind: 'by-query', op: handler.op, target: index };
    case 'streaming-bulk':
    case 'other':
      return PASSTHROUGH;
  }
}

/** Elasticsearch rejects empty index names and names starting with `_` (also for aliases and data streams). */
function isPossibleIndexName(index: string): boolean {
  return index.length > 0 && !index.startsWith('_');
}
