import { decodePathSegment } from './path-segments.js';
import { RouteTrie } from './es-route-trie.js';
import { COMPATIBLE_7_ROUTES, WRITE_ROUTES, type RouteHandler, type RouteRow } from './es-write-routes.js';

/**
 * OpenSearch 2.17 and later stream a bulk: items are answered while the body still arrives
 * (OpenSearch: server/src/main/java/org/opensearch/rest/action/document/RestBulkStreamingAction.java).
 */
const STREAMING_BULK_ROUTES: readonly RouteRow[] = [
  [['PUT', 'POST'], '/_bulk/stream', 'current', { kind: 'streaming-bulk' }],
  [['PUT', 'POST'], '/{index}/_bulk/stream', 'current', { kind: 'streaming-bulk' }],
];

/**
 * OpenSearch 1.x, a fork of Elasticsearch 7.10, serves the typed routes of Elasticsearch 7 to every
 * request, with no compatible-with header (OpenSearch 1.3:
 * server/src/main/java/org/opensearch/rest/action/document/RestIndexAction.java, RestDeleteAction,
 * RestUpdateAction, RestBulkAction; modules/reindex/.../RestUpdateByQueryAction, RestDeleteByQueryAction).
 * 2.x removed them and serves the routes of `WRITE_ROUTES`.
 */
const TYPED_ROUTES_OF_OPENSEARCH_1: readonly RouteRow[] = COMPATIBLE_7_ROUTES.map(([methods, path, , handler]) => [methods, path, 'current', handler]);

/**
 * OpenSearch 1.x takes `_type` in the action lines of every bulk, typeless routes included
 * (OpenSearch 1.3: server/src/main/java/org/opensearch/action/bulk/BulkRequestParser.java).
 */
const WRITE_ROUTES_OF_OPENSEARCH: readonly RouteRow[] = WRITE_ROUTES.map(([methods, path, version, handler]) => [
  methods,
  path,
  version,
  handler.kind === 'bulk' ? { kind: 'bulk', typed: true } : handler,
]);

function buildTrie(): RouteTrie<RouteHandler> {
  const trie = new RouteTrie<RouteHandler>(decodePathSegment);
  for (const [methods, path, version, handler] of [...WRITE_ROUTES_OF_OPENSEARCH, ...TYPED_ROUTES_OF_OPENSEARCH_1, ...STREAMING_BULK_ROUTES]) {
    for (const method of methods) trie.add(method, path, version, handler);
  }
  return trie;
}

/**
 * The write routes of every supported OpenSearch release (1.x typed, 2.x and 3.x typeless, the
 * streaming bulk), read with the same trie rules as Elasticsearch's: OpenSearch kept its PathTrie.
 * Immutable after construction; shared by every request.
 */
export const OPENSEARCH_ROUTES: RouteTrie<RouteHandler> = buildTrie();

/**
 * Whether OpenSearch 1.x could store a document under this mapping type: it refuses a type that
 * starts with `_` unless it is `_doc` (OpenSearch 1.3:
 * server/src/main/java/org/opensearch/index/mapper/MapperService.java, validateTypeName), so
 * `POST /logs/_search` or `PUT /logs/_settings/x` are never typed writes there.
 */
export function isPossibleOpenSearch1Type(type: string): boolean {
  return type === '_doc' || !type.startsWith('_');
}
