import { ElasticsearchContainer, type StartedElasticsearchContainer } from '@testcontainers/elasticsearch';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startProxyRuntime, type ProxyRuntime } from '../../../src/server/proxy-runtime.js';
import { detectContainerRuntime } from '../../support/container-runtime.js';
import { jsonOf, rawRequest } from '../../support/http-request.js';
import { testSettings } from '../../support/test-settings.js';
import { waitForLockService } from '../../support/write-stack.js';
import { ZkWireTap } from '../../support/zk-wire-tap.js';
import { basic, lockCreates } from '../auth/security-fixture.js';

/** A real cluster with security on (the image's default), its `elastic` user's password set; needs Docker (or Podman) through testcontainers. */
const ELASTICSEARCH_IMAGE = 'docker.elastic.co/elasticsearch/elasticsearch:8.15.3';
const PASSWORD = 'proxy-test-secret';

const runtime = await detectContainerRuntime();
const skipReason = runtime.available ? null : runtime.reason;
if (skipReason !== null) console.log(`[real-elasticsearch] security suite skipped: ${skipReason}`);

describe.skipIf(skipReason !== null)(`real Elasticsearch 8 with security on, through the proxy${skipReason === null ? '' : ` (skipped: ${skipReason})`}`, () => {
  let container: StartedElasticsearchContainer | undefined;
  let tap: ZkWireTap | undefined;
  let proxy: ProxyRuntime | undefined;
  const urlOf = (started: ProxyRuntime): string => `http://127.0.0.1:${started.proxyAddress.port}`;
  const put = (path: string, headers: Record<string, string>) =>
    rawRequest(urlOf(proxy!), { method: 'PUT', path, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ n: 1 }) });

  beforeAll(async () => {
    container = await new ElasticsearchContainer(ELASTICSEARCH_IMAGE).withPassword(PASSWORD).withEnvironment({ ES_JAVA_OPTS: '-Xms512m -Xmx512m' }).start();
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
    const defaults = testSettings().proxy.auth;
    proxy = await startProxyRuntime(
      testSettings({
        elasticsearch: { hosts: [container.getHttpUrl()], auth: { kind: 'basic', username: 'elastic', password: PASSWORD } },
        zookeeper: { servers: tap.connectString, lockRoot: `/real-es-security-${Date.now().toString(36)}`, documentCleanup: 'reaper' },
        proxy: { auth: { ...defaults, verify: 'auto' } },
      }),
      pino({ level: 'silent' }),
    );
    await waitForLockService(proxy);
    // A first write with the right credentials: security detected, the lock service's start-up nodes made.
    expect((await put('/secured/_doc/warm-up', basic('elastic', PASSWORD))).status).toBe(201);
  }, 240_000);

  afterAll(async () => {
    await proxy?.close();
    await tap?.close();
    await container?.stop();
  });

  it('a write with a wrong password gets the cluster’s own 401 and takes no lock; the document is not written', async () => {
    tap!.resetCounts();
    const refused = await put('/secured/_doc/1', basic('elastic', 'not-the-password'));
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('Basic realm="security"');
    expect((jsonOf(refused) as { error: { type: string } }).error.type).toBe('security_exception');
    expect(lockCreates(tap!)).toBe(0);
    const read = await rawRequest(container!.getHttpUrl(), { path: '/secured/_doc/1', headers: basic('elastic', PASSWORD) });
    expect(read.status).toBe(404);
  });

  it('a write with the right password takes its lock and is written', async () => {
    tap!.resetCounts();
    expect((await put('/secured/_doc/2', basic('elastic', PASSWORD))).status).toBe(201);
    expect(lockCreates(tap!)).toBeGreaterThan(0);
    const read = await rawRequest(container!.getHttpUrl(), { path: '/secured/_doc/2', headers: basic('elastic', PASSWORD) });
    expect((jsonOf(read) as { _source: unknown })._source).toEqual({ n: 1 });
  });
});
