import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import type { ZooKeeperSettings } from '../../src/config/settings.js';
import type { LockEngineStats } from '../../src/lock/lock-stats.js';
import { ZooKeeperLockEngine } from '../../src/lock/zookeeper/zookeeper-lock-engine.js';
import type { BenchArgs, ReleaseMode } from './bench-args.js';
import { type BenchResult, OverlapChecker, percentile } from './bench-result.js';

/**
 * Unmeasured operations before each measured run, the same count as CuratorBench.java's (capped by
 * --ops). 200 left Curator's JVM compiling during the measurement: in alternating runs a longer
 * warm-up (2,000–3,000) raised its spread throughput by 43–45% and its warm throughput by 22–28%.
 */
const WARMUP_OPS = 2_000;

function warmupOps(args: BenchArgs): number {
  return Math.min(args.ops, WARMUP_OPS);
}

function settingsFor(zk: string): ZooKeeperSettings {
  return {
    servers: zk,
    sessionTimeoutMs: 10_000,
    connectionRetry: 5,
    connectionDelayMs: 1_000,
    foregroundPrefix: 'A',
    backgroundPrefix: 'B',
    lockRoot: '/es-lock-proxy-bench/locks',
    auth: null,
    handOverMaxCount: 16,
    handOverMaxMs: 100,
    lingerMs: 0,
    documentCleanup: 'release',
  };
}

const owner = { host: hostname(), pid: process.pid, requestId: 'bench' };

/**
 * One acquire + release. `pipelined`: the release is sent but not awaited, as the proxy does
 * (it answers the client first); ZooKeeper answers a session's requests in order, so the next
 * acquire on the same session is served after it — its latency then includes the release's.
 */
async function once(engine: ZooKeeperLockEngine, index: string, id: string, release: ReleaseMode): Promise<void> {
  const held = await engine.acquire({ index, id }, 'foreground', { timeoutMs: 30_000, owner });
  const released = held.release();
  if (release === 'await') await released;
}

async function sequential(engine: ZooKeeperLockEngine, args: BenchArgs, idFor: (i: number) => string, index: string): Promise<number[]> {
  for (let i = 0; i < warmupOps(args); i++) await once(engine, index, `warmup-${idFor(i)}`, args.release);
  const latencies: number[] = [];
  for (let i = 0; i < args.ops; i++) {
    const start = performance.now();
    await once(engine, index, idFor(i), args.release);
    latencies.push(performance.now() - start);
  }
  return latencies;
}

async function contended(engines: readonly ZooKeeperLockEngine[], args: BenchArgs, keyFor: () => string, perClient: number): Promise<number> {
  const checker = new OverlapChecker();
  let started = 0;
  const worker = async (engine: ZooKeeperLockEngine): Promise<void> => {
    while (started < args.ops) {
      started++;
      const id = keyFor();
      const held = await engine.acquire({ index: `bench-${args.workload}`, id }, 'foreground', { timeoutMs: 60_000, owner });
      checker.enter(id);
      await new Promise<void>((resolve) => setImmediate(resolve));
      checker.leave(id);
      const released = held.release();
      if (args.release === 'await') await released;
    }
  };
  await Promise.all(engines.flatMap((engine) => Array.from({ length: perClient }, () => worker(engine))));
  return checker.violations;
}

function perLock(before: LockEngineStats[], after: LockEngineStats[], ops: number): Record<string, number> {
  const sum = (list: LockEngineStats[], kind: keyof LockEngineStats['zkOps']): number => list.reduce((n, s) => n + s.zkOps[kind], 0);
  const kinds: (keyof LockEngineStats['zkOps'])[] = ['create', 'delete', 'get', 'getChildren'];
  return Object.fromEntries(kinds.map((k) => [k, Math.round(((sum(after, k) - sum(before, k)) / ops) * 100) / 100]));
}

async function connectedEngines(zk: string, count: number): Promise<ZooKeeperLockEngine[]> {
  const logger = pino({ level: 'warn' }, pino.destination(2));
  const engines = Array.from({ length: count }, () => new ZooKeeperLockEngine(settingsFor(zk), logger));
  await Promise.all(engines.map((engine) => once(engine, 'bench-connect', randomUUID(), 'await')));
  return engines;
}

export async function runEsLockBench(zk: string, args: BenchArgs): Promise<BenchResult> {
  const engines = await connectedEngines(zk, args.clients);
  const run = randomUUID().slice(0, 8);
  try {
    if (args.workload === 'cold' || args.workload === 'warm') {
      const engine = engines[0]!;
      const before = [engine.stats()];
      const latencies = await sequential(engine, args, args.workload === 'cold' ? (i) => `${run}-${i}` : () => `warm-${run}`, `bench-${args.workload}`);
      latencies.sort((a, b) => a - b);
      const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length;
      return {
        impl: 'es-lock-proxy',
        workload: args.workload,
        ops: args.ops,
        ops_per_s: Math.round(1000 / mean),
        p50_ms: percentile(latencies, 50),
        p99_ms: percentile(latencies, 99),
        violations: 0,
        clients: 1,
        release: args.release,
        zk_ops_per_lock: perLock(before, [engine.stats()], args.ops + warmupOps(args)),
      };
    }
    const perClient = args.perClient;
    const keyFor = args.workload === 'hot' ? () => `hot-${run}` : () => `${run}-${Math.floor(Math.random() * args.keys)}`;
    await contended(engines, { ...args, ops: warmupOps(args) }, keyFor, perClient);
    const before = engines.map((e) => e.stats());
    const start = performance.now();
    const violations = await contended(engines, args, keyFor, perClient);
    const elapsed = performance.now() - start;
    return {
      impl: 'es-lock-proxy',
      workload: args.workload,
      ops: args.ops,
      ops_per_s: Math.round((args.ops / elapsed) * 1000),
      p50_ms: null,
      p99_ms: null,
      violations,
      clients: args.clients,
      per_client: perClient,
      release: args.release,
      zk_ops_per_lock: perLock(before, engines.map((e) => e.stats()), args.ops),
    };
  } finally {
    await Promise.all(engines.map((engine) => engine.close()));
  }
}
