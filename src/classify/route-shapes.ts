import type { RouteVersion } from './es-route-trie.js';
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
  /** `current`: in every specification given; `v7`: in every 8.x one only, so it shadows compatible-with=7 requests alone. */
  readonly version: RouteVersion;
}

/** The routes of one release's specification. */
export interface VersionedSpec {
  readonly version: string;
  readonly routes: readonly SpecRoute[];
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
 * The specifications' non-write routes that a request could match as well as a write route of the
 * classifier's tables (e.g. `/{index}/_fleet/_fleet_search` and the typed `/{index}/{type}/{id}`).
 * Elasticsearch's trie prefers the literal segment, so without these routes the classifier would
 * take such a request for a write. One row per trie path and version, methods merged across APIs.
 *
 * A route counts only where every supported release has it: on a release that lacks it, a request
 * on its path can be the write the path spells (with compatible-with=7 on 8.x, a typed write of a
 * document named like the route's last segment). Routes of every given specification shadow every
 * request; routes of every 8.x specification but not of all the others shadow compatible-with=7
 * requests only, as the typed routes exist on 8.x alone.
 */
export function shadowingRoutes(specs: readonly VersionedSpec[], writeRows: readonly RouteRow[]): ShadowingRoute[] {
  const writeShapes = writeRows.map(([, path]) => shapeOf(path));
  const perSpec = specs.map((spec) => shadowingPairs(spec.routes, writeShapes));
  const v7Specs = perSpec.filter((_, i) => majorOf(specs[i]?.version ?? '') === 8);
  const rows = new Map<string, { apis: string[]; path: string; methods: Method[]; version: RouteVersion }>();
  const allPairs = new Map<string, ShadowingPair[]>();
  for (const pairs of perSpec) for (const [key, pair] of pairs) allPairs.set(key, [...(allPairs.get(key) ?? []), pair]);
  for (const [key, pairs] of allPairs) {
    const version = shadowedVersion(key, perSpec, v7Specs);
    const first = pairs[0];
    if (version === null || first === undefined) continue;
    const rowKey = `${version} ${first.shape}`;
    const row = rows.get(rowKey) ?? { apis: [], path: first.path, methods: [], version };
    if (!row.methods.includes(first.method)) row.methods.push(first.method);
    for (const pair of pairs) for (const api of pair.apis) if (!row.apis.includes(api)) row.apis.push(api);
    rows.set(rowKey, row);
  }
  return [...rows.values()]
    .map((row) => ({ apis: [...row.apis].sort(), path: row.path, methods: [...row.methods].sort(), version: row.version }))
    .sort((a, b) => compare(a.path, b.path) || compare(a.version, b.version));
}

function shadowedVersion(key: string, all: ReadonlyArray<ReadonlyMap<string, ShadowingPair>>, v7: ReadonlyArray<ReadonlyMap<string, ShadowingPair>>): RouteVersion | null {
  if (all.every((pairs) => pairs.has(key))) return 'current';
  return v7.length > 0 && v7.every((pairs) => pairs.has(key)) ? 'v7' : null;
}

interface ShadowingPair {
  readonly apis: string[];
  readonly path: string;
  readonly method: Method;
  readonly shape: string;
}

/** `METHOD shape` of every non-write route of one specification that meets a write route. */
function shadowingPairs(spec: readonly SpecRoute[], writeShapes: readonly string[][]): Map<string, ShadowingPair> {
  const pairs = new Map<string, ShadowingPair>();
  for (const route of spec) {
    if (MODELLED_SPEC_APIS.has(route.api)) continue;
    const shape = shapeOf(route.path);
    if (!writeShapes.some((writeShape) => shapesOverlap(shape, writeShape))) continue;
    // The specification describes some handlers as several APIs (`inference.put` and
    // `inference.put_openai` are one PUT route): one trie path, one registration per method.
    for (const method of route.methods) {
      const key = `${method} ${shape.join('/')}`;
      const pair = pairs.get(key) ?? { apis: [], path: route.path, method, shape: shape.join('/') };
      if (!pair.apis.includes(route.api)) pair.apis.push(route.api);
      pairs.set(key, pair);
    }
  }
  return pairs;
}

function majorOf(version: string): number {
  return Number.parseInt(version.split('.')[0] ?? '', 10);
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
