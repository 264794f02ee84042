import type { RouteVersion } from './es-route-trie.js';

/** What a matched route does, as far as locking is concerned. */
export type RouteHandler =
  | { readonly kind: 'single'; readonly op: 'index' | 'create' | 'update' | 'delete'; readonly typed: boolean }
  | { readonly kind: 'auto-id'; readonly typed: boolean }
  | { readonly kind: 'bulk'; readonly typed: boolean }
  | { readonly kind: 'by-query'; readonly op: 'update_by_query' | 'delete_by_query' | 'reindex' }
  | { readonly kind: 'streaming-bulk' }
  | { readonly kind: 'other' };

export type Method = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE';
export type RouteRow = readonly [methods: readonly Method[], path: string, version: RouteVersion, handler: RouteHandler];

export const OTHER: RouteHandler = { kind: 'other' };
const single = (op: 'index' | 'create' | 'update' | 'delete', typed: boolean): RouteHandler => ({ kind: 'single', op, typed });

/** Elasticsearch 8.x / 9.x document-write routes (RestIndexAction, RestDeleteAction, RestUpdateAction, RestBulkAction, reindex module). */
export const WRITE_ROUTES: readonly RouteRow[] = [
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
export const COMPATIBLE_7_ROUTES: readonly RouteRow[] = [
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
 * The REST specification's names for the APIs the tables above model. The route generator checks
 * that the tables cover every path and method the specification gives them, so a release that
 * adds a write route fails the generation instead of leaving that route unlocked.
 */
export const MODELLED_SPEC_APIS: ReadonlySet<string> = new Set([
  'index',
  'create',
  'update',
  'delete',
  'bulk',
  'update_by_query',
  'delete_by_query',
  'reindex',
]);
