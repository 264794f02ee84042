import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { RouteTrie, type Resolution, type RouteVersion } from '../../../src/classify/es-route-trie.js';
import { ELASTICSEARCH_ROUTES } from '../../../src/classify/es-routes.js';
import { SPEC_SHADOWING_ROUTES, SPEC_VERSIONS as SHADOWING_SPEC_VERSIONS } from '../../../src/classify/es-spec-shadowing-routes.generated.js';
import { COMPATIBLE_7_ROUTES, MODELLED_SPEC_APIS, OTHER, WRITE_ROUTES, type RouteHandler } from '../../../src/classify/es-write-routes.js';
import { decodePathSegment } from '../../../src/classify/path-segments.js';
import { classifyRoute, type RouteClassification } from '../../../src/classify/route-parser.js';
import { shadowingRoutes, shapeOf, unmodelledWriteRoutes, type SpecRoute } from '../../../src/classify/route-shapes.js';
import { SPECIFICATIONS } from '../../support/es-spec-routes.generated.js';

/*
 * Every path and method of Elasticsearch's REST API specification of each supported release (the
 * last 8.x and the newest 9.x branch), sent as a client would send it, plain and with
 * compatible-with=7, 8 and 9: the document-write APIs must be recognised as writes (by id:
 * locked; auto-id: forwarded, nothing can collide), the by-query APIs as by-query (the by-query
 * policy, never a per-document lock), and every other API must pass through — a search or a
 * downsampling taken for a typed write would wait for a document lock, get 429 while the
 * "document" is held and fail while ZooKeeper is down.
 */

const specs = SPECIFICATIONS.map(({ version, routes }) => ({ version, routes: routes.map(([api, path, methods]): SpecRoute => ({ api, path, methods })) }));

const PLAIN: IncomingHttpHeaders = { accept: 'application/json', 'content-type': 'application/json' };
const compatibleWith = (major: number): IncomingHttpHeaders => ({
  accept: `application/vnd.elasticsearch+json; compatible-with=${major}`,
  'content-type': `application/vnd.elasticsearch+json; compatible-with=${major}`,
});

const INDEX = 'products';
const ID = '42';

/** Values a client would put in each path parameter; any other parameter gets `my-<name>`. */
const PARAM_VALUES: Readonly<Record<string, string>> = {
  index: INDEX,
  id: ID,
  alias: 'products-current',
  target: 'products-small',
  target_index: 'products-downsampled',
  new_index: 'products-000002',
  task_id: 'oTUltX4IQMOUUVeiohTt8A:12345',
  node_id: 'node-1',
  metric: 'indices',
  index_metric: 'docs',
  block: 'write',
  fields: 'title',
  ids: 'VuaCfGcBCdbkQm-e5aOx',
  scroll_id: 'FGluY2x1ZGVfY29udGV4dF91dWlkDXF1ZXJ5QW5kRmV0Y2gBFmRUV1pYV2pZUTVHUXhDbl9feVlLM0EAAAAAAAAAFxZ4dlBVRk5xNVRVU1RQX1dQMzRCYU1R',
  task_type: 'text_embedding',
  snapshot: 'snapshot-2026.11.27',
  repository: 'backups',
  username: 'jdoe',
  zoom: '13',
  x: '4207',
  y: '2692',
  timestamp: '1732700000000',
  version: '7.17.0',
  max_archive_version: '8',
};

function instantiate(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(PARAM_VALUES[name] ?? `my-${name.replaceAll('_', '-')}`));
}

/** What the request must be classified as, from the API's name alone. */
function expectedClassification(api: string, path: string): RouteClassification {
  const index = path.includes('{index}') ? INDEX : null;
  switch (api) {
    case 'index':
      return path.includes('{id}') ? single('index') : { kind: 'auto-id', index: INDEX };
    case 'create':
    case 'update':
    case 'delete':
      return single(api);
    case 'bulk':
      // Typed: its action lines may name a `_type`, as OpenSearch 1.x takes on every bulk route.
      return { kind: 'bulk', defaultIndex: index, typed: true };
    case 'update_by_query':
    case 'delete_by_query':
    case 'reindex':
      return { kind: 'by-query', op: api, target: index };
    default:
      return { kind: 'passthrough' };
  }
}

function single(op: 'index' | 'create' | 'update' | 'delete'): RouteClassification {
  return { kind: 'single', op, index: INDEX, id: ID, typed: false };
}

function misclassified(spec: readonly SpecRoute[], headers: IncomingHttpHeaders): string[] {
  const wrong: string[] = [];
  for (const { api, path, methods } of spec) {
    for (const method of methods) {
      const url = instantiate(path);
      const expected = expectedClassification(api, path);
      const actual = classifyRoute(method, url, headers);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        wrong.push(`${api}: ${method} ${url} classified ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
      }
    }
  }
  return wrong;
}

describe.each(specs)("classifyRoute over every route of Elasticsearch's REST API specification $version", ({ routes }) => {
  it('walks the whole specification', () => {
    expect(new Set(routes.map((route) => route.api)).size).toBeGreaterThan(500);
    expect(routes.reduce((pairs, route) => pairs + route.methods.length, 0)).toBeGreaterThan(800);
  });

  it('takes exactly the document writes of a plain request for writes', () => {
    expect(misclassified(routes, PLAIN)).toEqual([]);
  });

  it.each([7, 8, 9])('takes exactly the document writes of a compatible-with=%i request for writes', (major) => {
    expect(misclassified(routes, compatibleWith(major))).toEqual([]);
  });

  it('serves every path and method the specification gives a write API', () => {
    expect(unmodelledWriteRoutes(routes, WRITE_ROUTES)).toEqual([]);
  });
});

describe('the generated shadowing list', () => {
  it('comes from the same specifications and today’s write tables', () => {
    expect(SHADOWING_SPEC_VERSIONS).toEqual(specs.map((spec) => spec.version));
    const derived = shadowingRoutes(specs, [...WRITE_ROUTES, ...COMPATIBLE_7_ROUTES]).map((r) => [r.methods, r.path, r.version, r.apis.join(' ')]);
    expect(SPEC_SHADOWING_ROUTES).toEqual(derived);
  });
});

/** The write routes and every route of the specification: Elasticsearch's router as far as the specification knows it. */
function wholeSpecificationTrie(spec: readonly SpecRoute[]): RouteTrie<RouteHandler> {
  const trie = new RouteTrie<RouteHandler>(decodePathSegment);
  for (const [methods, path, version, handler] of [...WRITE_ROUTES, ...COMPATIBLE_7_ROUTES]) for (const m of methods) trie.add(m, path, version, handler);
  const registered = new Set<string>();
  for (const { api, path, methods } of spec) {
    if (MODELLED_SPEC_APIS.has(api)) continue;
    const unnamed = `/${shapeOf(path).map((segment) => (segment === '*' ? '{}' : segment)).join('/')}`;
    for (const method of methods) {
      if (registered.has(`${method} ${unnamed}`)) continue;
      registered.add(`${method} ${unnamed}`);
      trie.add(method, unnamed, 'current', OTHER);
    }
  }
  return trie;
}

/**
 * Request paths where a write route and a specification route meet: each specification path cut or
 * padded to each write route's length, its parameters filled with the write route's literals or
 * with index names, type names and ids that look like API names.
 */
function meetingPaths(spec: readonly SpecRoute[]): Set<string> {
  const writeShapes = [...WRITE_ROUTES, ...COMPATIBLE_7_ROUTES].map(([, path]) => shapeOf(path));
  const fills = ['products', 'doc', '_doc', '_all', '_bulk', '_create', '_update', '_source'];
  const paths = new Set<string>();
  for (const { path } of spec) {
    const specShape = shapeOf(path);
    for (const writeShape of writeShapes) {
      for (const length of [writeShape.length, specShape.length]) {
        for (const fill of fills) {
          const segments = Array.from({ length }, (_, i) => {
            const literal = [specShape[i], writeShape[i]].find((segment) => segment !== undefined && segment !== '*');
            return literal ?? (i === 0 ? INDEX : fill);
          });
          paths.add(`/${segments.join('/')}`);
        }
      }
    }
  }
  return paths;
}

/** Elasticsearch 8 serves compatible-with=7 requests; 9 refuses them. */
function routeVersionsOf(version: string): RouteVersion[] {
  return version.startsWith('8.') ? ['current', 'v7'] : ['current'];
}

function writeOrPass(resolution: Resolution<RouteHandler>): string {
  if (!resolution.matched || resolution.handler.kind === 'other') return 'pass';
  return JSON.stringify([resolution.handler, [...resolution.params]]);
}

describe.each(specs)('the generated shadowing list against $version', ({ version, routes }) => {
  it('picks the same writes as a router holding every route of the specification', () => {
    const whole = wholeSpecificationTrie(routes);
    const paths = meetingPaths(routes);
    expect(paths.size).toBeGreaterThan(10_000);
    const differing: string[] = [];
    for (const path of paths) {
      for (const method of ['PUT', 'POST', 'DELETE']) {
        for (const routeVersion of routeVersionsOf(version)) {
          const listed = writeOrPass(ELASTICSEARCH_ROUTES.resolve(method, path, routeVersion));
          const everything = writeOrPass(whole.resolve(method, path, routeVersion));
          if (listed !== everything) differing.push(`${method} ${path} (${routeVersion}): ${listed}, whole specification: ${everything}`);
        }
      }
    }
    expect(differing).toEqual([]);
  });
});
