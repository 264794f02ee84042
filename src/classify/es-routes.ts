import { decodePathSegment } from './path-segments.js';
import { RouteTrie } from './es-route-trie.js';
import { SPEC_SHADOWING_ROUTES } from './es-spec-shadowing-routes.generated.js';
import { COMPATIBLE_7_ROUTES, OTHER, WRITE_ROUTES, type RouteHandler, type RouteRow } from './es-write-routes.js';

export type { RouteHandler } from './es-write-routes.js';

/**
 * Non-write routes that share a trie path with the write routes and so change which route wins:
 * `POST /idx/_fleet/_fleet_search` with compatible-with=7 is a fleet search, not a typed index of
 * id `_fleet_search`; `PUT /idx/_settings/x` is 405, not a typed write. Derived from Elasticsearch's
 * REST API specification by `npm run spec:routes`, which keeps every specification route a request
 * could match as well as a write route. Wildcards are unnamed: no handler reads their values.
 *
 * A route Elasticsearch has that is missing here can only make the proxy lock a request
 * Elasticsearch treats as a non-write; a route listed here that Elasticsearch lacks could hide a
 * write, which is why the list comes from the specification and from nowhere else.
 */
const SHADOWING_ROUTES: readonly RouteRow[] = SPEC_SHADOWING_ROUTES.map(([methods, path, version]) => [methods, unnamedWildcards(path), version, OTHER]);

function unnamedWildcards(path: string): string {
  return path.replace(/\{[^}]*\}/g, '{}');
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
