import { describe, expect, it } from 'vitest';
import { COMPATIBLE_7_ROUTES, WRITE_ROUTES } from '../../../src/classify/es-write-routes.js';
import { shadowingRoutes, shapeOf, shapesOverlap, unmodelledWriteRoutes, type SpecRoute } from '../../../src/classify/route-shapes.js';

const WRITE_ROWS = [...WRITE_ROUTES, ...COMPATIBLE_7_ROUTES];

describe('shapesOverlap', () => {
  it.each([
    ['/{index}/_fleet/_fleet_search', '/{index}/{type}/{id}', true],
    ['/{index}/_mapping/field/{fields}', '/{index}/{type}/{id}/_update', true],
    ['/_reindex/{task_id}/_rethrottle', '/{index}/_doc/{id}', true],
    ['/{alias}', '/_bulk', true],
    ['/_search', '/_bulk', false],
    ['/{index}/_search', '/{index}/_doc/{id}', false],
    ['/{index}/_stats/{metric}', '/{index}/{type}/{id}/_create', false],
    ['/_cat/indices/{index}', '/{index}/{type}/{id}/_source', false],
  ])('%s and %s: %s', (a, b, expected) => {
    expect(shapesOverlap(shapeOf(a), shapeOf(b))).toBe(expected);
    expect(shapesOverlap(shapeOf(b), shapeOf(a))).toBe(expected);
  });
});

describe('shadowingRoutes', () => {
  it('keeps the non-write routes a write route could also match, one row per trie path with merged methods', () => {
    const spec: SpecRoute[] = [
      { api: 'fleet.search', path: '/{index}/_fleet/_fleet_search', methods: ['GET', 'POST'] },
      { api: 'get', path: '/{index}/_doc/{id}', methods: ['GET'] },
      { api: 'exists', path: '/{index}/_doc/{id}', methods: ['HEAD'] },
      { api: 'index', path: '/{index}/_doc/{id}', methods: ['PUT', 'POST'] },
      { api: 'inference.put', path: '/_inference/{task_type}/{inference_id}', methods: ['PUT'] },
      { api: 'inference.put_openai', path: '/_inference/{task_type}/{openai_inference_id}', methods: ['PUT'] },
      { api: 'search', path: '/{index}/_search/template/x/y', methods: ['POST'] },
    ];
    expect(shadowingRoutes([{ version: '8.19', routes: spec }], WRITE_ROWS)).toEqual([
      { apis: ['inference.put', 'inference.put_openai'], path: '/_inference/{task_type}/{inference_id}', methods: ['PUT'], version: 'current' },
      { apis: ['exists', 'get'], path: '/{index}/_doc/{id}', methods: ['GET', 'HEAD'], version: 'current' },
      { apis: ['fleet.search'], path: '/{index}/_fleet/_fleet_search', methods: ['GET', 'POST'], version: 'current' },
    ]);
  });

  it('keeps a route for every request only where every release has it, and for compatible-with=7 where every 8.x release has it', () => {
    const shared: SpecRoute = { api: 'fleet.search', path: '/{index}/_fleet/_fleet_search', methods: ['POST'] };
    const removedIn9: SpecRoute = { api: 'indices.unfreeze', path: '/{index}/_unfreeze', methods: ['POST'] };
    const addedIn9: SpecRoute = { api: 'indices.remove_block', path: '/{index}/_block/{block}', methods: ['DELETE'] };
    const addedIn819: SpecRoute = { api: 'streams.logs_enable', path: '/_streams/logs/_enable', methods: ['POST'] };
    const specs = [
      { version: '8.18', routes: [shared, removedIn9] },
      { version: '8.19', routes: [shared, removedIn9, addedIn819] },
      { version: '9.5', routes: [shared, addedIn9, addedIn819] },
    ];
    expect(shadowingRoutes(specs, WRITE_ROWS)).toEqual([
      { apis: ['fleet.search'], path: '/{index}/_fleet/_fleet_search', methods: ['POST'], version: 'current' },
      { apis: ['indices.unfreeze'], path: '/{index}/_unfreeze', methods: ['POST'], version: 'v7' },
    ]);
  });

  it('merges a path whose methods differ in where they exist into one row per version', () => {
    const specs = [
      { version: '8.19', routes: [{ api: 'indices.add_block', path: '/{index}/_block/{block}', methods: ['PUT'] }] as SpecRoute[] },
      { version: '9.5', routes: [{ api: 'indices.add_block', path: '/{index}/_block/{block}', methods: ['PUT'] }, { api: 'indices.remove_block', path: '/{index}/_block/{block}', methods: ['DELETE'] }] as SpecRoute[] },
    ];
    expect(shadowingRoutes(specs, WRITE_ROWS)).toEqual([{ apis: ['indices.add_block'], path: '/{index}/_block/{block}', methods: ['PUT'], version: 'current' }]);
  });
});

describe('unmodelledWriteRoutes', () => {
  it('names a write API path or method no current write route serves', () => {
    const spec: SpecRoute[] = [
      { api: 'index', path: '/{index}/_doc/{id}', methods: ['PUT', 'POST'] },
      { api: 'update', path: '/{index}/_update/{id}', methods: ['POST', 'PUT'] },
      { api: 'bulk', path: '/{index}/_bulk/{stream}', methods: ['POST'] },
      { api: 'search', path: '/{index}/_search', methods: ['POST'] },
    ];
    expect(unmodelledWriteRoutes(spec, WRITE_ROWS)).toEqual(['update: PUT /{index}/_update/{id}', 'bulk: POST /{index}/_bulk/{stream}']);
  });
});
