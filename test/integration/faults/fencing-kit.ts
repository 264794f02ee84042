import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { FencingMode } from '../../../src/config/settings.js';
import { startProxyRuntime, type ProxyRuntime } from '../../../src/server/proxy-runtime.js';
import type { EsStandIn } from '../../support/es-stand-in.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { testSettings } from '../../support/test-settings.js';
import { waitForLockService } from '../../support/write-stack.js';
import { captureLogs, type CapturedLogs, type Outcome, type WriteAnswer } from './fault-kit.js';

export const EXPIRY_SESSION_TIMEOUT_MS = 2_000;

/**
 * Two proxies on one ZooKeeper: A through a TCP forwarder that can freeze (its session then
 * expires while its write is held inside the stand-in), B connected directly. A's logs are kept.
 */
export interface ExpiryPair {
  readonly a: ProxyRuntime;
  readonly b: ProxyRuntime;
  readonly urlA: string;
  readonly urlB: string;
  readonly zkLinkOfA: TcpForwarder;
  readonly logsOfA: CapturedLogs;
  close(): Promise<void>;
}

export async function startExpiryPair(zookeeper: string, standIn: EsStandIn, fencing: FencingMode): Promise<ExpiryPair> {
  const zkLinkOfA = await TcpForwarder.start(zookeeper);
  const deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-dlq-'));
  const lockRoot = `/fencing-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const settingsFor = (servers: string) =>
    testSettings({
      // lingerMs 0: B's seed write must not leave B keeping k3, so that A's bulk takes both of
      // its keys at once and sends both items in the one sub-bulk the test holds in flight.
      zookeeper: { servers, lockRoot, sessionTimeoutMs: EXPIRY_SESSION_TIMEOUT_MS, connectionRetry: 3, connectionDelayMs: 500, lingerMs: 0 }, lock: { foregroundTimeoutMs: 10_000 },
      elasticsearch: { hosts: [standIn.url] },
      proxy: { deadLetterDir, fencing },
    });
  const logsOfA = captureLogs('info');
  const a = await startProxyRuntime(settingsFor(zkLinkOfA.connectString), logsOfA.logger);
  const b = await startProxyRuntime(settingsFor(zookeeper), pino({ level: 'silent' }));
  await Promise.all([waitForLockService(a), waitForLockService(b)]);
  return {
    a,
    b,
    urlA: `http://127.0.0.1:${a.proxyAddress.port}`,
    urlB: `http://127.0.0.1:${b.proxyAddress.port}`,
    zkLinkOfA,
    logsOfA,
    close: async () => {
      zkLinkOfA.unfreeze();
      await a.close();
      await b.close();
      await zkLinkOfA.close();
      await rm(deadLetterDir, { recursive: true, force: true });
    },
  };
}

export async function fencedWritesCounted(proxy: ProxyRuntime): Promise<number> {
  const { body } = await proxy.metrics.render();
  return sampleValue(parsePrometheusText(body), 'es_lock_proxy_fenced_writes_total');
}

export function answerOf(outcome: Outcome): WriteAnswer {
  if (outcome.kind !== 'answered') throw new Error(`no answer: ${outcome.error}`);
  return outcome.answer;
}

/** The stand-in's history of a document as `[body, result or error type]` pairs, in application order. */
export function historyOf(standIn: EsStandIn, index: string, id: string): unknown[] {
  return standIn.history(index, id).map((write) => [write.body, write.result ?? write.error]);
}
