import { MODELLED_SPEC_APIS, type Method, type RouteRow } from './es-write-routes.js';

/** One path of one API in Elasticsearch's REST API specification (`url.paths[]`). */
export interface SpecRoute {
  readonly api: string;
  readonly path: string;
  readonly methods: readonly Method[];
}

/** A non-write route the classifier must know, so that a request on its path is not taken for a write. */
export interface ShadowingRoute {
  readonly apis: readonly string[];
  readonly path: string;
  readonly methods: readonly Method[];
}

/** A path's segments with every `{param}` as `*`: routes differing only in parameter names are one trie path. */
export function shapeOf(path: string): string[] {
  return path
    .split('/')
    .slice(1)
    .map((segment) => (/^\{.*\}$/.test(segment) ? '*' : segment));
}

/** Whether some request path matches both shapes: same length, and each segment a wildcard on one side or equal. */
export function shapesOverlap(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((segment, i) => segment === '*' || b[i] === '*' || segment === b[i]);
}

/**
 * The specification's non-write routes that a request could match as well as a write route of the
 * classifier's tables (e.g. `/{index}/_fleet/_fleet_search` and the typed `/{index}/{type}/{id}`).
 * Elasticsearch's trie prefers the literal segment, so without these routes the classifier would
 * take such a request for a write. One row per trie path, methods merged across APIs.
 */
export function shadowingRoutes(spec: readonly SpecRoute[], writeRows: readonly RouteRow[]): ShadowingRoute[] {
  const writeShapes = writeRows.map(([, path]) => shapeOf(path));
  const byShape = new Map<string, { apis: string[]; path: string; methods: Method[] }>();
  for (const route of spec) {
    if (MODELLED_SPEC_APIS.has(route.api)) continue;
    const shape = shapeOf(route.path);
    if (!writeShapes.some((writeShape) => shapesOverlap(shape, writeShape))) continue;
    const key = shape.join('/');
    const row = byShape.get(key) ?? { apis: [], path: route.path, methods: [] };
    // The specification describes some handlers as several APIs (`inference.put` and
    // `inference.put_openai` are one PUT route): one trie path, one registration per method.
    for (const method of route.methods) if (!row.methods.includes(method)) row.methods.push(method);
    if (!row.apis.includes(route.api)) row.apis.push(route.api);
    byShape.set(key, row);
  }
  return [...byShape.values()]
    .map((row) => ({ apis: [...row.apis].sort(), path: row.path, methods: [...row.methods].sort() }))
    .sort((a, b) => compare(a.path, b.path));
}

/**
 * Paths and methods the specification gives a write API that no write route of the tables
 * serves: such a request would pass through unlocked.
 */
export function unmodelledWriteRoutes(spec: readonly SpecRoute[], writeRows: readonly RouteRow[]): string[] {
  const missing: string[] = [];
  for (const route of spec) {
    if (!MODELLED_SPEC_APIS.has(route.api)) continue;
    const key = shapeOf(route.path).join('/');
    for (const method of route.methods) {
      const served = writeRows.some(([methods, path, version]) => version === 'current' && methods.includes(method) && shapeOf(path).join('/') === key);
      if (!served) missing.push(`${route.api}: ${method} ${route.path}`);
    }
  }
  return missing;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
