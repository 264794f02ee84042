import { describe, expect, it } from 'vitest';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { classifyRoute, type RouteClassification } from '../../../src/classify/route-parser.js';
import { OPENSEARCH_SPEC_ROUTES } from '../../support/opensearch-spec-routes.generated.js';

/*
 * Every path and method of OpenSearch's REST API specification (1.x to 3.x, plugins included),
 * sent as a client sends it: the document writes must be locked, the streaming bulk refused, the
 * by-query APIs handed to the by-query policy, and everything else passed through.
 */

const INDEX = 'products';
const ID = '42';
const PARAM_VALUES: Readonly<Record<string, string>> = { index: INDEX, id: ID, task_id: 'oTUltX4IQMOUUVeiohTt8A:12345', node_id: 'node-1', type: 'event' };

function instantiate(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(PARAM_VALUES[name] ?? `my-${name.replaceAll('_', '-')}`));
}

type Expected = RouteClassification | { readonly refused: string };

/**
 * OpenSearch 3.x APIs on a path that OpenSearch 1.x serves as a typed index of a document (type
 * `ingestion`, id `_pause`): locked, since the proxy cannot tell which of the two it fronts.
 */
const TYPED_WRITES_ON_OPENSEARCH_1: ReadonlySet<string> = new Set(['ingestion.pause', 'ingestion.resume']);

function expectedClassification(group: string, path: string): Expected {
  const index = path.includes('{index}') ? INDEX : null;
  if (TYPED_WRITES_ON_OPENSEARCH_1.has(group)) return { kind: 'single', op: 'index', index: INDEX, id: path.slice(path.lastIndexOf('/') + 1), typed: true };
  switch (group) {
    case 'index':
      return path.includes('{id}') ? single('index') : { kind: 'auto-id', index: INDEX };
    case 'create':
    case 'update':
    case 'delete':
      return single(group);
    case 'bulk':
      // Typed: its action lines may name a `_type`, as OpenSearch 1.x takes on every bulk route.
      return { kind: 'bulk', defaultIndex: index, typed: true };
    case 'bulk_stream':
      return { refused: 'STREAMING_BULK_UNSUPPORTED' };
    case 'update_by_query':
    case 'delete_by_query':
    case 'reindex':
      return { kind: 'by-query', op: group, target: index };
    default:
      return { kind: 'passthrough' };
  }
}

function single(op: 'index' | 'create' | 'update' | 'delete'): RouteClassification {
  return { kind: 'single', op, index: INDEX, id: ID, typed: false };
}

function classified(method: string, url: string): Expected {
  try {
    return classifyRoute(method, url, { 'content-type': 'application/json' });
  } catch (error) {
    if (error instanceof ProxyError) return { refused: error.code };
    throw error;
  }
}

describe("classifyRoute over every route of OpenSearch's REST API specification", () => {
  it('walks the whole specification, the streaming bulk included', () => {
    expect(new Set(OPENSEARCH_SPEC_ROUTES.map(([group]) => group)).size).toBeGreaterThan(400);
    const streaming = OPENSEARCH_SPEC_ROUTES.filter(([group]) => group === 'bulk_stream').map(([, path, method]) => `${method} ${path}`);
    expect(streaming.sort()).toEqual(['POST /_bulk/stream', 'POST /{index}/_bulk/stream', 'PUT /_bulk/stream', 'PUT /{index}/_bulk/stream']);
  });

  it('locks exactly the document writes, refuses the streaming bulk and passes everything else through', () => {
    const wrong: string[] = [];
    for (const [group, path, method] of OPENSEARCH_SPEC_ROUTES) {
      const url = instantiate(path);
      const expected = expectedClassification(group, path);
      const actual = classified(method, url);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) wrong.push(`${group}: ${method} ${url} classified ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    }
    expect(wrong).toEqual([]);
  });
});
