import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxyRuntime, type ProxyRuntime } from '../../../src/server/proxy-runtime.js';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { testSettings } from '../../support/test-settings.js';
import { waitForLockService } from '../../support/write-stack.js';
import { listZnodes } from '../../support/zookeeper-ensemble.js';
import { startZooKeeper, type ZooKeeperCluster } from '../../support/zookeeper-server.js';
import { captureLogs, exchange, isElasticsearchError, LEVEL, waitUntil } from './fault-kit.js';

const SESSION_TIMEOUT_MS = 2_000;
const IN_FLIGHT = { 'x-fault-phase': 'in-flight' };

/**
 * Proxy A reaches ZooKeeper through a forwarder that can freeze (a silent partition); proxy B is
 * connected directly. Freezing A past its session timeout must mark its locks lost, keep a write
 * that was not forwarded yet from being forwarded, log the incident with the document key, and
 * end with a new session — and it shows the one thing no lock service can prevent: a write
 * already in Elasticsearch's hands when the session expires overlaps the next holder's write.
 */
describe('session expiry while holding locks', () => {
  let zk: ZooKeeperCluster;
  let forwarder: TcpForwarder;
  let standIn: EsStandIn;
  let deadLetterDir: string;
  const lockRoot = `/expiry-${Date.now().toString(36)}`;
  const logs = captureLogs('info');
  let a: ProxyRuntime;
  let b: ProxyRuntime;

  beforeAll(async () => {
    zk = await startZooKeeper(1, { tickTimeMs: 200 });
    forwarder = await TcpForwarder.start(zk.connectString);
    standIn = await startEsStandIn();
    deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-dlq-'));
    const settingsFor = (servers: string) =>
      testSettings({
        zookeeper: { servers, lockRoot, sessionTimeoutMs: SESSION_TIMEOUT_MS, connectionRetry: 3, connectionDelayMs: 500 }, lock: { foregroundTimeoutMs: 10_000 },
        elasticsearch: { hosts: [standIn.url] },
        proxy: { deadLetterDir },
      });
    a = await startProxyRuntime(settingsFor(forwarder.connectString), logs.logger);
    b = await startProxyRuntime(settingsFor(zk.connectString), pino({ level: 'silent' }));
    await Promise.all([waitForLockService(a), waitForLockService(b)]);
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await forwarder?.close();
    await standIn?.stop();
    await zk?.stop();
    if (deadLetterDir !== undefined) await rm(deadLetterDir, { recursive: true, force: true });
  });

  it('marks the held lock lost, forwards nothing unlocked, logs the key, and reconnects with a new session', async () => {
    const urlA = `http://127.0.0.1:${a.proxyAddress.port}`;
    const urlB = `http://127.0.0.1:${b.proxyAddress.port}`;
    expect((await exchange(`${urlA}/expiry/_doc/warm`, { method: 'PUT', body: '{}' })).kind).toBe('answered');

    // k1: a write A has forwarded, held inside Elasticsearch (gate). k2: a lock A holds through the
    // engine itself, and a write through A queued behind it (acquired later, never forwarded yet).
    const gate = standIn.gate((request) => request.headers['x-fault-phase'] === 'in-flight');
    const inFlight = exchange(`${urlA}/expiry/_doc/k1`, { method: 'PUT', body: '{"from":"a"}', headers: IN_FLIGHT }, 30_000);
    await gate.arrived(1);
    const direct = await a.locks.acquire({ index: 'expiry', id: 'k2' }, 'foreground', {
      timeoutMs: 5_000,
      owner: { host: 'test', pid: process.pid, requestId: 'direct' },
    });
    const queued = exchange(`${urlA}/expiry/_doc/k2`, { method: 'PUT', body: '{"from":"a-queued"}' }, 30_000);
    // Queued behind A's own holder: it waits in A's local queue (A holds the ZooKeeper lock for both).
    await waitUntil(async () => (await a.locks.inspect({ index: 'expiry', id: 'k2' })).queue.length === 1, 5_000, 'queued write behind the holder');

    const frozenAt = performance.now();
    forwarder.freeze();
    await new Promise<void>((resolve) => direct.lost.addEventListener('abort', () => resolve(), { once: true }));
    const lostAfterMs = performance.now() - frozenAt;
    expect(lostAfterMs).toBeLessThan(SESSION_TIMEOUT_MS);

    // B's write to k1 gets the lock once ZooKeeper expired A's session, while A's k1 write is still
    // inside Elasticsearch: the overlap a lock cannot prevent (documented in the README).
    const overtaking = await exchange(`${urlB}/expiry/_doc/k1`, { method: 'PUT', body: '{"from":"b"}' }, 30_000);
    const overtookAfterMs = performance.now() - frozenAt;
    gate.release();
    const inFlightAnswer = await inFlight;

    forwarder.unfreeze();
    const queuedAnswer = await queued;
    await waitUntil(() => a.locks.state() === 'connected', 15_000, 'A connected again');
    const afterwards = await exchange(`${urlA}/expiry/_doc/k2`, { method: 'PUT', body: '{"from":"a-new-session"}' });

    expect(overtaking.kind === 'answered' && overtaking.answer.status).toBe(201);
    expect(overtookAfterMs).toBeGreaterThan(SESSION_TIMEOUT_MS * 0.9);
    // Applied after B's write created the document: Elasticsearch saw both, in the wrong order.
    expect(inFlightAnswer.kind === 'answered' && inFlightAnswer.answer.status).toBe(200);
    expect(standIn.overlaps.count).toBe(1);
    expect(standIn.overlaps.examples[0]?.key).toBe('expiry/k1');
    // A's write, released from the gate, landed last: the document ends with its stale content.
    expect(standIn.history('expiry', 'k1').map((write) => [write.body, write.result])).toEqual([
      [{ from: 'b' }, 'created'],
      [{ from: 'a' }, 'updated'],
    ]);
    expect(standIn.document('expiry', 'k1')?.source).toEqual({ from: 'a' });

    expect(queuedAnswer.kind).toBe('answered');
    if (queuedAnswer.kind === 'answered') {
      expect(queuedAnswer.answer.status).toBe(503);
      expect(isElasticsearchError(queuedAnswer.answer, ['lock_service_unavailable_exception'])).toBe(true);
    }
    const k2Writes = standIn.requests.filter((request) => request.url === '/expiry/_doc/k2');
    expect(k2Writes.map((request) => request.body.toString())).toEqual(['{"from":"a-new-session"}']);
    expect(afterwards.kind === 'answered' && afterwards.answer.status).toBe(201);

    const errors = logs.lines().filter((line) => typeof line.level === 'number' && line.level >= LEVEL.error);
    const lostWrite = errors.find((line) => JSON.stringify(line.lock ?? null).includes('"id":"k1"'));
    expect(lostWrite, JSON.stringify(errors)).toBeDefined();
    expect(lostWrite?.lock).toMatchObject({ index: 'expiry', id: 'k1', outcome: 'lost' });
    const generations = logs.lines().filter((line) => line.msg === 'ZooKeeper connected').map((line) => line.generation);
    expect(generations.length).toBeGreaterThanOrEqual(2);
    expect(new Set(generations).size).toBe(generations.length);

    await direct.release();
    await waitUntil(async () => (await listZnodes(zk.connectString, lockRoot)).lockNodes.length === 0, 10_000, 'no lock nodes left');
    console.log(
      `session-expiry: lock lost ${Math.round(lostAfterMs)} ms after the freeze (session ${SESSION_TIMEOUT_MS} ms), ` +
        `queued write answered ${queuedAnswer.kind === 'answered' ? queuedAnswer.answer.status : 'none'} and not forwarded, ` +
        `in-flight write overlapped by the next holder after ${Math.round(overtookAfterMs)} ms (1 overlap, logged at error with its key), ` +
        `new session generation ${String(generations.at(-1))}`,
    );
  });
});
