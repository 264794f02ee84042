import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSpecification, routesOfSource } from '../../../scripts/es-spec-reader.js';

/* The route generator's reader, on request definitions written as elastic/elasticsearch-specification writes them. */

const INDEX_REQUEST = `
import { RequestBase } from '@_types/Base'
/**
 * Create or update a document in an index.
 * @rest_spec_name index
 * @availability stack stability=stable
 * @availability serverless stability=stable visibility=public
 * @doc_id docs-index
 */
export interface Request<TDocument> extends RequestBase {
  urls: [
    {
      path: '/{index}/_doc/{id}'
      methods: ['PUT', 'POST']
    },
    {
      path: '/{index}/_doc'
      methods: ['POST']
    }
  ]
  path_parts: { id?: Id; index: IndexName }
  /** @codegen_name document */
  body: TDocument
}
`;

const SERVERLESS_ONLY_REQUEST = `
/**
 * @rest_spec_name project.tags
 * @availability serverless stability=experimental visibility=public
 */
export interface Request extends RequestBase {
  urls: [{ path: '/_project/tags'; methods: ['GET'] }]
}
`;

const REQUEST_WITHOUT_URLS = `
/**
 * @rest_spec_name indices.create_from
 * @availability stack since=8.18.0 stability=experimental
 */
export interface Request extends RequestBase {
  path_parts: { source: IndexName; dest: IndexName }
}
`;

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function specificationDir(files: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'es-spec-'));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('routesOfSource', () => {
  it('reads the urls of a request and names them by @rest_spec_name', () => {
    expect(routesOfSource('IndexRequest.ts', INDEX_REQUEST)).toEqual({
      routes: [
        { api: 'index', path: '/{index}/_doc/{id}', methods: ['PUT', 'POST'] },
        { api: 'index', path: '/{index}/_doc', methods: ['POST'] },
      ],
      requestsWithoutUrls: [],
    });
  });

  it('leaves out an API that exists on serverless only', () => {
    expect(routesOfSource('TagsRequest.ts', SERVERLESS_ONLY_REQUEST)).toEqual({ routes: [], requestsWithoutUrls: [] });
  });

  it('names a stack API whose request has no urls', () => {
    expect(routesOfSource('MigrateCreateFromRequest.ts', REQUEST_WITHOUT_URLS)).toEqual({ routes: [], requestsWithoutUrls: ['indices.create_from'] });
  });

  it('refuses a method Elasticsearch has no route for', () => {
    const patch = INDEX_REQUEST.replace("['PUT', 'POST']", "['PATCH']");
    expect(() => routesOfSource('IndexRequest.ts', patch)).toThrow('unexpected method PATCH');
  });
});

describe('readSpecification', () => {
  it('reads the TypeScript definitions when every request has its urls (9.2 and later)', () => {
    const dir = specificationDir({ '_global/index/IndexRequest.ts': INDEX_REQUEST, 'project/tags/TagsRequest.ts': SERVERLESS_ONLY_REQUEST });
    expect(readSpecification(dir)).toEqual({
      format: 'typescript',
      routes: [
        { api: 'index', path: '/{index}/_doc', methods: ['POST'] },
        { api: 'index', path: '/{index}/_doc/{id}', methods: ['PUT', 'POST'] },
      ],
    });
  });

  it('reads _json_spec where the TypeScript definitions lack urls (8.x branches)', () => {
    const json = { 'indices.create_from': { url: { paths: [{ path: '/_create_from/{source}/{dest}', methods: ['PUT', 'POST'] }] } } };
    const dir = specificationDir({
      '_global/index/IndexRequest.ts': INDEX_REQUEST,
      'indices/create_from/MigrateCreateFromRequest.ts': REQUEST_WITHOUT_URLS,
      '_json_spec/indices.create_from.json': JSON.stringify(json),
    });
    expect(readSpecification(dir)).toEqual({ format: '_json_spec', routes: [{ api: 'indices.create_from', path: '/_create_from/{source}/{dest}', methods: ['PUT', 'POST'] }] });
  });

  it('stops, naming the APIs, when neither is complete', () => {
    const dir = specificationDir({ '_global/index/IndexRequest.ts': INDEX_REQUEST, 'indices/create_from/MigrateCreateFromRequest.ts': REQUEST_WITHOUT_URLS });
    expect(() => readSpecification(dir)).toThrow('indices.create_from');
  });
});
