import { Client } from '@elastic/elasticsearch';
import { ElasticsearchContainer, type StartedElasticsearchContainer } from '@testcontainers/elasticsearch';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../../src/server/start-proxy.js';
import { detectContainerRuntime } from '../../support/container-runtime.js';
import { rawRequest } from '../../support/http-request.js';
import { testSettings } from '../../support/test-settings.js';

/** The real cluster the write-path suites extend; needs Docker (or Podman) through testcontainers. */
const ELASTICSEARCH_IMAGE = 'docker.elastic.co/elasticsearch/elasticsearch:8.15.3';

const runtime = await detectContainerRuntime();
const skipReason = runtime.available ? null : runtime.reason;
if (skipReason !== null) console.log(`[real-elasticsearch] suite skipped: ${skipReason}`);

describe.skipIf(skipReason !== null)(`real Elasticsearch 8 through the proxy${skipReason === null ? '' : ` (skipped: ${skipReason})`}`, () => {
  let container: StartedElasticsearchContainer | undefined;
  let proxy: RunningProxy | undefined;
  let client: Client | undefined;
  let proxyUrl = '';

  beforeAll(async () => {
    container = await new ElasticsearchContainer(ELASTICSEARCH_IMAGE)
      .withEnvironment({ 'xpack.security.enabled': 'false', ES_JAVA_OPTS: '-Xms512m -Xmx512m' })
      .start();
    const settings = testSettings({
      elasticsearch: { hosts: [container.getHttpUrl()] },
      zookeeper: { servers: inject('zookeeperConnect') },
    });
    proxy = await startProxy(settings, pino({ level: 'silent' }));
    proxyUrl = `http://127.0.0.1:${proxy.proxyAddress.port}`;
    client = new Client({ node: proxyUrl });
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await proxy?.close();
    await container?.stop();
  });

  const es = (): Client => {
    if (client === undefined) throw new Error('suite not started');
    return client;
  };

  it('passes index, get, search and bulk through unchanged', async () => {
    const indexed = await es().index({ index: 'pass-through', id: 'a/1', document: { name: 'lamp' }, refresh: 'wait_for' });
    expect(indexed).toMatchObject({ _index: 'pass-through', _id: 'a/1', result: 'created' });
    const got = await es().get<{ name: string }>({ index: 'pass-through', id: 'a/1' });
    expect(got._source).toEqual({ name: 'lamp' });

    const bulk = await es().bulk({
      refresh: 'wait_for',
      operations: [{ index: { _index: 'pass-through', _id: '2' } }, { name: 'desk' }, { create: { _index: 'pass-through', _id: 'a/1' } }, { name: 'dup' }],
    });
    expect(bulk.items.map((item) => Object.values(item)[0]?.status)).toEqual([201, 409]);

    const found = await es().search<{ name: string }>({ index: 'pass-through', query: { match: { name: 'desk' } } });
    expect(found.hits.hits.map((hit) => hit._id)).toEqual(['2']);
  });

  it('answers /readyz once the cluster answers', async () => {
    if (proxy === undefined) throw new Error('suite not started');
    const ready = await rawRequest({ host: '127.0.0.1', port: proxy.adminAddress.port }, { path: '/readyz' });
    expect(ready.status).toBe(200);
  });
});
