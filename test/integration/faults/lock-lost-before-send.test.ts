import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxyRuntime, type ProxyRuntime } from '../../../src/server/proxy-runtime.js';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { testSettings } from '../../support/test-settings.js';
import { startTlsTerminator, type TlsTerminator } from '../../support/tls-terminator.js';
import { waitForLockService } from '../../support/write-stack.js';
import { startZooKeeper, type ZooKeeperCluster } from '../../support/zookeeper-server.js';
import { captureLogs, exchange, isElasticsearchError, type Outcome, waitUntil } from './fault-kit.js';

const SESSION_TIMEOUT_MS = 2_000;

/**
 * The lock is checked when the request is handed to the upstream socket, not
 * only once after the grant. The write here has its lock and waits for a TLS handshake with the
 * cluster (held by a frozen forwarder) while the proxy's ZooKeeper link goes silent past the
 * safety margin: once the handshake completes the write must not be sent.
 */
describe('a lock lost while the write waits for its upstream connection', () => {
  let zk: ZooKeeperCluster;
  let zkLink: TcpForwarder;
  let standIn: EsStandIn;
  let tls: TlsTerminator;
  let upstreamLink: TcpForwarder;
  let proxy: ProxyRuntime;
  let deadLetterDir: string;
  const logs = captureLogs('info');

  beforeAll(async () => {
    zk = await startZooKeeper(1, { tickTimeMs: 200 });
    zkLink = await TcpForwarder.start(zk.connectString);
    standIn = await startEsStandIn();
    tls = await startTlsTerminator(standIn.port);
    upstreamLink = await TcpForwarder.start(`127.0.0.1:${tls.port}`);
    deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-dlq-'));
    const settings = testSettings({
      zookeeper: { servers: zkLink.connectString, lockRoot: `/lost-before-send-${Date.now().toString(36)}`, sessionTimeoutMs: SESSION_TIMEOUT_MS }, lock: { foregroundTimeoutMs: 10_000 },
      elasticsearch: { hosts: [`https://127.0.0.1:${upstreamLink.port}`], ssl: { caFile: tls.caFile, verify: true } },
      proxy: { deadLetterDir, upstreamTimeoutMs: 30_000 },
    });
    proxy = await startProxyRuntime(settings, logs.logger);
    await waitForLockService(proxy);
  }, 60_000);

  afterAll(async () => {
    await proxy?.close();
    await upstreamLink?.close();
    await tls?.close();
    await standIn?.stop();
    await zkLink?.close();
    await zk?.stop();
    if (deadLetterDir !== undefined) await rm(deadLetterDir, { recursive: true, force: true });
  });

  it('is not sent when the handshake completes after the lock was lost', async () => {
    const answer = await lostDuringHandshake('/lost/_doc/1', 'PUT', '{"v":"after the lock was lost"}', 'application/json');
    expect(answer.kind).toBe('answered');
    if (answer.kind === 'answered') {
      expect(answer.answer.status, answer.answer.body).toBe(503);
      expect(isElasticsearchError(answer.answer)).toBe(true);
    }
    expect(standIn.requests.filter((request) => request.url === '/lost/_doc/1')).toHaveLength(0);
    expect(standIn.document('lost', '1')).toBeUndefined();
  });

  it('a bulk is not sent either', async () => {
    const body = '{"index":{"_index":"lost","_id":"b1"}}\n{"v":1}\n{"index":{"_index":"lost","_id":"b2"}}\n{"v":2}\n';
    const answer = await lostDuringHandshake('/_bulk', 'POST', body, 'application/x-ndjson');
    expect(answer.kind).toBe('answered');
    if (answer.kind === 'answered') expect(answer.answer.status, answer.answer.body).toBe(503);
    expect(standIn.requests.filter((request) => request.url === '/_bulk')).toHaveLength(0);
    expect(standIn.document('lost', 'b1')).toBeUndefined();
  });

  /**
   * Sends a write whose lock is granted while its upstream connection waits for a TLS handshake
   * (held by the frozen forwarder), freezes the proxy's ZooKeeper link until the lock is declared
   * lost, then lets the handshake complete. Leaves the proxy connected again.
   */
  async function lostDuringHandshake(path: string, method: string, body: string, contentType: string): Promise<Outcome> {
    const url = `http://127.0.0.1:${proxy.proxyAddress.port}`;
    await waitUntil(() => proxy.locks.state() === 'connected', 30_000, 'the proxy connected to ZooKeeper');
    // Warm-up: the alias look-up of the index is cached (a name that does not exist yet is looked up
    // again on its next write, so the index is made first) and one upstream connection is open.
    await exchange(`http://127.0.0.1:${standIn.port}/lost`, { method: 'PUT', body: '{}' });
    const warm = await exchange(`${url}/lost/_doc/warm`, { method: 'PUT', body: '{}' });
    expect(warm.kind === 'answered' && warm.answer.status).toBeLessThan(300);
    // A search held inside the cluster keeps that connection busy, so the next request needs a new one.
    const gate = standIn.gate((request) => request.url.startsWith('/lost/_search'));
    const search = exchange(`${url}/lost/_search`, { method: 'POST', body: '{}' }, 60_000);
    await gate.arrived(1);

    upstreamLink.freeze();
    const held = upstreamLink.heldConnections;
    const write = exchange(`${url}${path}`, { method, body, headers: { 'content-type': contentType } }, 60_000);
    await waitUntil(() => upstreamLink.heldConnections === held + 1, 10_000, 'the write waiting for its TLS handshake');

    zkLink.freeze();
    await waitUntil(() => proxy.locks.state() === 'unavailable', 10_000, 'the lock service past its safety margin');
    upstreamLink.unfreeze();
    const answer = await write;
    gate.remove();
    await search;
    zkLink.unfreeze();
    return answer;
  }
});
