/**
 * The lock engine's CPU per bulk key, without HTTP or Elasticsearch: 4 loops on one engine, each
 * taking 500 fresh keys with `acquireEach`, holding them 5 ms and releasing them (in the background,
 * as the proxy releases a bulk's keys), against a real
 * ZooKeeper. Prints one JSON line per round: the process's CPU per key.
 *
 *   npm run build:bench && node .bench-build/bench/engine-bulk-cost.js   (ZK=host:port to use a running server; ROUNDS=n)
 *
 * Run from the compiled build (tsx's loader adds its own helpers to every class and closure).
 */
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import type { HeldLock } from '../src/lock/lock-engine.js';
import { ZooKeeperLockEngine } from '../src/lock/zookeeper/zookeeper-lock-engine.js';
import { type ZooKeeperCluster, startZooKeeper } from '../test/support/zookeeper-server.js';
import { runScript } from './bench-script.js';

const STREAMS = 4;
const KEYS_PER_BULK = 500;
const BULKS_PER_STREAM = 40;
const WARMUP_BULKS_PER_STREAM = 20;
const HOLD_MS = 5;
const owner = { host: hostname(), pid: process.pid, requestId: 'engine-bulk-cost' };

async function main(): Promise<void> {
  let own: ZooKeeperCluster | null = null;
  let connect = process.env.ZK;
  if (connect === undefined) {
    own = await startZooKeeper(1, { jvm: 'production' });
    connect = own.connectString;
  }
  const engine = new ZooKeeperLockEngine(
    {
      servers: connect,
      sessionTimeoutMs: 10_000,
      connectionRetry: 5,
      connectionDelayMs: 1_000,
      foregroundPrefix: 'A',
      backgroundPrefix: 'B',
      lockRoot: '/engine-bulk-cost/locks',
      auth: null,
      handOverMaxCount: 16,
      handOverMaxMs: 100,
      lingerMs: 0,
      documentCleanup: 'release',
    },
    pino({ level: 'silent' }),
  );
  while (engine.state() !== 'connected') await new Promise((resolve) => setTimeout(resolve, 50));
  let next = 0;
  const stream = async (bulks: number): Promise<void> => {
    for (let b = 0; b < bulks; b++) {
      const keys = Array.from({ length: KEYS_PER_BULK }, () => ({ index: 'bulk-cost', id: `d${next++}` }));
      const held: HeldLock[] = [];
      const result = await engine.acquireEach(keys, 'background', { timeoutMs: 30_000, owner, onGranted: (lock) => held.push(lock) });
      if (result.failed.size > 0) throw new Error(`${result.failed.size} keys not granted`);
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      // As the proxy gives a bulk's keys back: nobody waits for the commit.
      for (const lock of held) lock.releaseInBackground();
    }
  };
  await Promise.all(Array.from({ length: STREAMS }, () => stream(WARMUP_BULKS_PER_STREAM)));
  for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const before = next;
    await Promise.all(Array.from({ length: STREAMS }, () => stream(BULKS_PER_STREAM)));
    const used = process.cpuUsage(cpu);
    const keys = next - before;
    console.log(JSON.stringify({ keys, cpuUsPerKey: Number(((used.user + used.system) / keys).toFixed(2)), wallMs: Math.round(performance.now() - started) }));
  }
  await engine.close();
  await own?.stop();
}

runScript(main);
