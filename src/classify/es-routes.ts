import { decodePathSegment } from './path-segments.js';
import { RouteTrie, type RouteVersion } from './es-route-trie.js';

/** What a matched route does, as far as locking is concerned. */
export type RouteHandler =
  | { readonly kind: 'single'; readonly op: 'index' | 'create' | 'update' | 'delete'; readonly typed: boolean }
  | { readonly kind: 'auto-id'; readonly typed: boolean }
  | { readonly kind: 'bulk'; readonly typed: boolean }
  | { readonly kind: 'by-query'; readonly op: 'update_by_query' | 'delete_by_query' | 'reindex' }
  | { readonly kind: 'other' };

type Method = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
type RouteRow = readonly [methods: readonly Method[], path: string, version: RouteVersion, handler: RouteHandler];

const OTHER: RouteHandler = { kind: 'other' };
const single = (op: 'index' | 'create' | 'update' | 'delete', typed: boolean): RouteHandler => ({ kind: 'single', op, typed });

/** Elasticsearch 8.x / 9.x document-write routes (RestIndexAction, RestDeleteAction, RestUpdateAction, RestBulkAction, reindex module). */
const WRITE_ROUTES: readonly RouteRow[] = [
  [['PUT', 'POST'], '/{index}/_doc/{id}', 'current', single('index', false)],
  [['DELETE'], '/{index}/_doc/{id}', 'current', single('delete', false)],
  [['PUT', 'POST'], '/{index}/_create/{id}', 'current', single('create', false)],
  [['POST'], '/{index}/_update/{id}', 'current', single('update', false)],
  [['POST'], '/{index}/_doc', 'current', { kind: 'auto-id', typed: false }],
  [['PUT', 'POST'], '/_bulk', 'current', { kind: 'bulk', typed: false }],
  [['PUT', 'POST'], '/{index}/_bulk', 'current', { kind: 'bulk', typed: false }],
  [['POST'], '/{index}/_update_by_query', 'current', { kind: 'by-query', op: 'update_by_query' }],
  [['POST'], '/{index}/_delete_by_query', 'current', { kind: 'by-query', op: 'delete_by_query' }],
  [['POST'], '/_reindex', 'current', { kind: 'by-query', op: 'reindex' }],
];

/**
 * The 7.x routes Elasticsearch 8 keeps for `compatible-with=7` requests only (9.x has none; a
 * compatible-with=7 request to 9.x is refused with 400, so treating it as typed only over-locks).
 * The typed by-query routes are listed on the safe side: classifying them as by-query at worst
 * applies the by-query policy to a request Elasticsearch refuses anyway.
 */
const COMPATIBLE_7_ROUTES: readonly RouteRow[] = [
  [['PUT', 'POST'], '/{index}/{type}/{id}', 'v7', single('index', true)],
  [['DELETE'], '/{index}/{type}/{id}', 'v7', single('delete', true)],
  [['GET', 'HEAD'], '/{index}/{type}/{id}', 'v7', OTHER],
  [['PUT', 'POST'], '/{index}/{type}/{id}/_create', 'v7', single('create', true)],
  [['POST'], '/{index}/{type}/{id}/_update', 'v7', single('update', true)],
  [['GET', 'HEAD'], '/{index}/{type}/{id}/_source', 'v7', OTHER],
  [['POST'], '/{index}/{type}', 'v7', { kind: 'auto-id', typed: true }],
  [['PUT', 'POST'], '/{index}/{type}/_bulk', 'v7', { kind: 'bulk', typed: true }],
  [['POST'], '/{index}/{type}/_update_by_query', 'v7', { kind: 'by-query', op: 'update_by_query' }],
  [['POST'], '/{index}/{type}/_delete_by_query', 'v7', { kind: 'by-query', op: 'delete_by_query' }],
];

/**
 * Non-write routes that share a trie path with the write routes and so change which route wins
 * (e.g. `PUT /idx/_settings/x` is 405, not a typed index write; `PUT /idx/_refresh/1` with
 * compatible-with=7 *is* one, because `/{index}/_refresh` has no child). Taken from the 8.x REST
 * spec path list. Only routes we are sure exist belong here: a route missing from this list can
 * only make the proxy lock something Elasticsearch treats as a non-write (harmless), while a route
 * listed wrongly could hide a write.
 */
const SHADOWING_ROUTES: readonly RouteRow[] = [
  [['GET', 'HEAD'], '/{index}/_doc/{id}', 'current', OTHER],
  [['GET', 'HEAD', 'PUT', 'DELETE'], '/{index}', 'current', OTHER],
  [['POST'], '/_reindex/{task_id}/_rethrottle', 'current', OTHER],
  [['POST'], '/_update_by_query/{task_id}/_rethrottle', 'current', OTHER],
  [['POST'], '/_delete_by_query/{task_id}/_rethrottle', 'current', OTHER],
  ...other(['GET', 'HEAD', 'PUT', 'POST', 'DELETE'], '/{index}/_alias/{name}'),
  ...other(['PUT', 'POST', 'DELETE'], '/{index}/_aliases/{name}'),
  ...other(['GET'], '/{index}/_alias'),
  ...other(['PUT', 'DELETE'], '/{index}/_block/{block}'),
  ...other(['POST'], '/{index}/_cache/clear'),
  ...['follow', 'forget_follower', 'info', 'pause_follow', 'resume_follow', 'stats', 'unfollow'].flatMap((verb) =>
    other(['GET', 'PUT', 'POST'], `/{index}/_ccr/${verb}`),
  ),
  ...other(['PUT', 'POST'], '/{index}/_clone/{target}'),
  ...other(['POST'], '/{index}/_close'),
  ...other(['GET', 'POST'], '/{index}/_count'),
  ...other(['POST'], '/{index}/_disk_usage'),
  ...other(['GET', 'POST'], '/{index}/_eql/search'),
  ...other(['GET', 'POST'], '/{index}/_explain/{id}'),
  ...other(['GET', 'POST'], '/{index}/_field_caps'),
  ...other(['GET', 'POST'], '/{index}/_flush'),
  ...other(['POST'], '/{index}/_forcemerge'),
  ...other(['GET', 'POST'], '/{index}/_graph/explore'),
  ...other(['GET'], '/{index}/_ilm/explain'),
  ...other(['POST'], '/{index}/_ilm/remove'),
  ...other(['POST'], '/{index}/_ilm/retry'),
  ...other(['GET', 'PUT', 'POST'], '/{index}/_mapping'),
  ...other(['GET'], '/{index}/_mapping/field/{fields}'),
  ...other(['GET', 'POST'], '/{index}/_mget'),
  ...other(['GET', 'POST'], '/{index}/_msearch'),
  ...other(['GET', 'POST'], '/{index}/_msearch/template'),
  ...other(['GET', 'POST'], '/{index}/_mtermvectors'),
  ...other(['POST'], '/{index}/_open'),
  ...other(['POST'], '/{index}/_pit'),
  ...other(['GET', 'POST'], '/{index}/_refresh'),
  ...other(['POST'], '/{index}/_rollover'),
  ...other(['POST'], '/{index}/_rollover/{new_index}'),
  ...other(['GET', 'POST'], '/{index}/_search'),
  ...other(['GET', 'POST'], '/{index}/_search/template'),
  ...other(['GET', 'POST'], '/{index}/_search_shards'),
  ...other(['GET'], '/{index}/_segments'),
  ...other(['GET', 'PUT'], '/{index}/_settings'),
  ...other(['GET'], '/{index}/_settings/{name}'),
  ...other(['PUT', 'POST'], '/{index}/_shrink/{target}'),
  ...other(['GET', 'HEAD'], '/{index}/_source/{id}'),
  ...other(['PUT', 'POST'], '/{index}/_split/{target}'),
  ...other(['GET'], '/{index}/_stats'),
  ...other(['GET'], '/{index}/_stats/{metric}'),
  ...other(['GET', 'POST'], '/{index}/_termvectors'),
  ...other(['GET', 'POST'], '/{index}/_termvectors/{id}'),
  ...other(['GET', 'POST'], '/{index}/_validate/query'),
];

function other(methods: readonly Method[], path: string): RouteRow[] {
  return [[methods, path, 'current', OTHER]];
}

function buildTrie(): RouteTrie<RouteHandler> {
  const trie = new RouteTrie<RouteHandler>(decodePathSegment);
  for (const [methods, path, version, handler] of [...WRITE_ROUTES, ...COMPATIBLE_7_ROUTES, ...SHADOWING_ROUTES]) {
    for (const method of methods) trie.add(method, path, version, handler);
  }
  return trie;
}

/** Immutable after construction; shared by every request. */
export const ELASTICSEARCH_ROUTES: RouteTrie<RouteHandler> = buildTrie();
