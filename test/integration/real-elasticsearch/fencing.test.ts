import { Client } from '@elastic/elasticsearch';
import { ElasticsearchContainer, type StartedElasticsearchContainer } from '@testcontainers/elasticsearch';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { FencingMode } from '../../../src/config/settings.js';
import { startProxyRuntime, type ProxyRuntime } from '../../../src/server/proxy-runtime.js';
import { detectContainerRuntime } from '../../support/container-runtime.js';
import { startGatingHttpProxy, type GatingHttpProxy } from '../../support/gating-http-proxy.js';
import { testSettings } from '../../support/test-settings.js';
import { waitForLockService } from '../../support/write-stack.js';

const ELASTICSEARCH_IMAGE = 'docker.elastic.co/elasticsearch/elasticsearch:8.15.3';
const UPSTREAM_TIMEOUT_MS = 1_000;

const runtime = await detectContainerRuntime();
const skipReason = runtime.available ? null : runtime.reason;
if (skipReason !== null) console.log(`[real-elasticsearch] fencing suite skipped: ${skipReason}`);

/**
 * Issue #14 against a real Elasticsearch 8: proxy A's write is held on its way into the cluster
 * (a gating HTTP proxy) until A has answered 504 and released the document; proxy B writes the
 * document; then A's write reaches the cluster. Fencing on: Elasticsearch itself refuses it (409)
 * and the document keeps B's content. Off: the stale write lands last.
 */
describe.skipIf(skipReason !== null).each(['on', 'off'] satisfies FencingMode[])(
  `real Elasticsearch 8: a write whose answer timed out (proxy.fencing=%s)${skipReason === null ? '' : ` (skipped: ${skipReason})`}`,
  (fencing) => {
    let container: StartedElasticsearchContainer | undefined;
    let gate: GatingHttpProxy | undefined;
    let direct: Client | undefined;
    const proxies: ProxyRuntime[] = [];
    let deadLetterDir = '';

    beforeAll(async () => {
      container = await new ElasticsearchContainer(ELASTICSEARCH_IMAGE)
        .withEnvironment({ 'xpack.security.enabled': 'false', ES_JAVA_OPTS: '-Xms512m -Xmx512m' })
        .start();
      direct = new Client({ node: container.getHttpUrl() });
      gate = await startGatingHttpProxy(container.getHttpUrl(), (req) => req.headers['x-fault-phase'] === 'hung');
      deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-real-fencing-'));
      const lockRoot = `/real-fencing-${Date.now().toString(36)}`;
      for (let i = 0; i < 2; i++) {
        const proxy = await startProxyRuntime(
          testSettings({
            elasticsearch: { hosts: [gate.url] },
            zookeeper: { servers: inject('zookeeperConnect'), lockRoot }, lock: { foregroundTimeoutMs: 10_000 },
            proxy: { deadLetterDir, fencing, upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS },
          }),
          pino({ level: 'silent' }),
        );
        proxies.push(proxy);
        await waitForLockService(proxy);
      }
    }, 180_000);

    afterAll(async () => {
      await Promise.all(proxies.map((proxy) => proxy.close()));
      await gate?.close();
      await direct?.close();
      await container?.stop();
      if (deadLetterDir !== '') await rm(deadLetterDir, { recursive: true, force: true });
    });

    const urlOf = (n: number): string => `http://127.0.0.1:${proxies[n]?.proxyAddress.port ?? 0}`;
    const put = (n: number, path: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
      fetch(`${urlOf(n)}${path}`, { method: path.includes('_bulk') ? 'POST' : 'PUT', headers: { 'content-type': 'application/json', ...headers }, body });

    it.each([
      ['single write', (id: string) => [`/fencing-real/_doc/${id}`, '{"from":"a"}', 'application/json'] as const],
      ['bulk item', (id: string) => ['/_bulk', `{"index":{"_index":"fencing-real","_id":"${id}"}}\n{"from":"a"}\n`, 'application/x-ndjson'] as const],
    ])('%s: the document ends with the next holder’s content (on) / the stale content (off)', async (_name, staleWrite) => {
      const es = direct!;
      const id = `${_name.replace(' ', '-')}-${fencing}`;
      await es.index({ index: 'fencing-real', id, document: { from: 'seed' }, refresh: true });
      const heldBefore = gate!.held;
      const releasedBefore = gate!.heldStatuses.length;
      const [path, body, contentType] = staleWrite(id);

      const timedOut = await put(0, path, body, { 'x-fault-phase': 'hung', 'content-type': contentType });
      await timedOut.text();
      expect(gate!.held).toBe(heldBefore + 1);
      const next = await put(1, `/fencing-real/_doc/${id}`, '{"from":"b"}');
      expect(next.status).toBe(200);
      gate!.release();
      await vi.waitFor(() => expect(gate!.heldStatuses.length).toBe(releasedBefore + 1), { timeout: 15_000 });

      const { _source: source } = await es.get<{ from: string }>({ index: 'fencing-real', id });
      if (fencing === 'on') {
        // A stale single write reaches the cluster with if_seq_no: 409. A bulk answers 200, its item 409.
        expect(gate!.heldStatuses.at(-1)).toBe(path === '/_bulk' ? 200 : 409);
        expect(source).toEqual({ from: 'b' });
      } else {
        expect(source).toEqual({ from: 'a' });
      }
    });
  },
);
