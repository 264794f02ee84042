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
import { startZooKeeper, type ZooKeeperCluster } from '../../support/zookeeper-server.js';
import { exchange, waitUntil } from './fault-kit.js';

/** Long enough that the window between the safety margin (~0.92 x) and the expiry is ~1 s. */
const SESSION_TIMEOUT_MS = 12_000;

/**
 * The safety margin keeps the lock, as a user's cluster sees it (the engine-level test is margin-keeps-lock.test.ts):
 * proxy A's ZooKeeper link goes silent past the safety margin and comes back before the session
 * expires, while A's write is still inside the cluster. A must stop trusting the lock (nothing new
 * forwarded under it) but keep privateLock until that write has answered: proxy B's write to the
 * same document may not start before.
 */
describe('a lock declared lost at the safety margin is kept until its write has answered', () => {
  let zk: ZooKeeperCluster;
  let link: TcpForwarder;
  let standIn: EsStandIn;
  let deadLetterDir: string;
  let a: ProxyRuntime;
  let b: ProxyRuntime;

  beforeAll(async () => {
    zk = await startZooKeeper(1, { tickTimeMs: 2_000 });
    link = await TcpForwarder.start(zk.connectString);
    standIn = await startEsStandIn();
    deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-dlq-'));
    const lockRoot = `/margin-${Date.now().toString(36)}`;
    const settingsFor = (servers: string) =>
      testSettings({
        zookeeper: { servers, lockRoot, sessionTimeoutMs: SESSION_TIMEOUT_MS }, lock: { foregroundTimeoutMs: 60_000 },
        elasticsearch: { hosts: [standIn.url] },
        proxy: { deadLetterDir, upstreamTimeoutMs: 120_000 },
      });
    a = await startProxyRuntime(settingsFor(link.connectString), pino({ level: 'silent' }));
    b = await startProxyRuntime(settingsFor(zk.connectString), pino({ level: 'silent' }));
    await Promise.all([waitForLockService(a), waitForLockService(b)]);
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await link?.close();
    await standIn?.stop();
    await zk?.stop();
    if (deadLetterDir !== undefined) await rm(deadLetterDir, { recursive: true, force: true });
  });

  it('B waits for A\'s write although A\'s link was silent past the margin', async () => {
    const urlA = `http://127.0.0.1:${a.proxyAddress.port}`;
    const urlB = `http://127.0.0.1:${b.proxyAddress.port}`;
    const gate = standIn.gateDocument('margin', 'doc');
    const writeA = exchange(`${urlA}/margin/_doc/doc`, { method: 'PUT', body: '{"from":"a"}' }, 120_000);
    await gate.arrived(1);

    link.freeze();
    await waitUntil(() => a.locks.state() === 'unavailable', SESSION_TIMEOUT_MS * 2, "A's locks declared lost at the margin");
    link.unfreeze();
    await waitUntil(() => a.locks.state() === 'connected', SESSION_TIMEOUT_MS, 'A back in the same session');

    const writeB = exchange(`${urlB}/margin/_doc/doc`, { method: 'PUT', body: '{"from":"b"}' }, 120_000);
    // A negative cannot be awaited: B gets one second — on the broken proxy it reaches the cluster
    // within milliseconds of A's reconnect — to show whether it waits for A's write.
    const reachedEarly = await Promise.race([
      standIn.waitForRequest((request) => request.body.toString() === '{"from":"b"}').then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1_000)),
    ]);
    gate.release();
    const [answerA, answerB] = await Promise.all([writeA, writeB]);

    expect(reachedEarly).toBe(false);
    expect(standIn.overlaps.count).toBe(0);
    expect(answerA.kind === 'answered' && answerA.answer.status).toBe(201);
    expect(answerB.kind === 'answered' && answerB.answer.status).toBe(200);
    expect(standIn.document('margin', 'doc')?.source).toEqual({ from: 'b' });
  });
});
