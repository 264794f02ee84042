import type { IncomingHttpHeaders } from 'node:http';
import { ProxyError } from '../errors/proxy-error.js';
import { routeVersionOf } from './compatibility.js';
import { ELASTICSEARCH_ROUTES, type RouteHandler } from './es-routes.js';
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
 * Recognises a document write the way Elasticsearch 8.x/9.x routes it.
 *
 * - The raw path (before `?`) is split on `/` and only then are the route's wildcard segments
 *   percent-decoded (`%2F` stays inside an id). Splitting follows Elasticsearch's PathTrie: any
 *   number of trailing slashes is ignored, an interior `//` yields an empty segment that matches a
 *   wildcard (`POST //_bulk` is a bulk with an empty default index, exactly as Elasticsearch sees it).
 * - Route choice replays Elasticsearch's trie rules over the write routes and the non-write routes
 *   that share their shape, so `/idx/_doc/_bulk` is an index of id `_bulk` (not a bulk) and
 *   `PUT /idx/_settings/x` is not a write.
 * - The 7.x typed routes apply only when the request asks for REST API version 7 as
 *   Elasticsearch reads Accept and Content-Type (`routeVersionOf`): Elasticsearch 8 registers them
 *   for version 7 only (a plain request gets 400/405 from it, so passing that through is right),
 *   and 9.x has no typed routes at all.
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
  const resolution = ELASTICSEARCH_ROUTES.resolve(upperMethod, rawPath, routeVersionOf(headers));
  if (!resolution.matched) return PASSTHROUGH;
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
    case 'other':
      return PASSTHROUGH;
  }
}

/** Elasticsearch rejects empty index names and names starting with `_` (also for aliases and data streams). */
function isPossibleIndexName(index: string): boolean {
  return index.length > 0 && !index.startsWith('_');
}
