import { Client } from '@elastic/elasticsearch';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startProxyHarness, type ProxyHarness } from '../../support/proxy-harness.js';

describe('the official @elastic/elasticsearch client through the proxy', () => {
  let harness: ProxyHarness;
  let client: Client;
  beforeEach(async () => {
    harness = await startProxyHarness();
    client = new Client({ node: harness.proxyUrl, maxRetries: 0 });
  });
  afterEach(async () => {
    await client.close();
    await harness.close();
  });

  it('indexes, gets, searches and bulks without ProductNotSupportedError', async () => {
    const info = await client.info();
    expect(info.version.number).toMatch(/^8\./);

    const indexed = await client.index({ index: 'products', id: 'p/1', document: { name: 'lamp' } });
    expect(indexed).toMatchObject({ _index: 'products', _id: 'p/1', result: 'created', _version: 1 });
    expect(harness.standIn.requests.at(-1)?.url).toBe('/products/_doc/p%2F1');

    const got = await client.get<{ name: string }>({ index: 'products', id: 'p/1' });
    expect(got._source).toEqual({ name: 'lamp' });

    const bulk = await client.bulk({
      operations: [{ index: { _index: 'products', _id: '2' } }, { name: 'desk' }, { create: { _index: 'products', _id: 'p/1' } }, { name: 'dup' }],
    });
    expect(bulk.errors).toBe(true);
    expect(bulk.items.map((item) => Object.values(item)[0]?.status)).toEqual([201, 409]);

    const found = await client.search<{ name: string }>({ index: 'products', query: { match: { name: 'desk' } } });
    expect(found.hits.hits.map((hit) => hit._id)).toEqual(['2']);

    const helperResult = await client.helpers.bulk({
      datasource: [{ id: 'h1' }, { id: 'h2' }],
      onDocument: (doc) => ({ index: { _index: 'products', _id: doc.id } }),
    });
    expect(helperResult.successful).toBe(2);
    expect(harness.standIn.documents('products').size).toBe(4);
  });

  it('surfaces Elasticsearch errors as ResponseError with status and type', async () => {
    await expect(client.get({ index: 'products', id: 'missing' })).rejects.toMatchObject({ meta: { statusCode: 404 } });
    await client.index({ index: 'products', id: '1', document: { a: 1 } });
    await expect(client.create({ index: 'products', id: '1', document: { a: 2 } })).rejects.toMatchObject({
      meta: { statusCode: 409, body: { error: { type: 'version_conflict_engine_exception' } } },
    });
  });
});
