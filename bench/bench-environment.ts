import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PROXY_NODE_FLAGS } from '../src/cli/node-flags.js';
import { startZooKeeper, type ZooKeeperCluster } from '../test/support/zookeeper-server.js';
import type { BenchOptions } from './bench-options.js';
import { jvmCpu, type JvmCpu } from './jvm-cpu.js';
import { numberField, objectField, spawnBenchChild, type BenchChild } from './child-process.js';

export interface ProxyStats {
  /** ZooKeeper operations issued by the proxy's lock engine since it started. */
  readonly zkOps: { readonly create: number; readonly delete: number; readonly get: number; readonly getChildren: number; readonly multi: number; readonly multiOps: number; readonly multiRefused: number };
  /** Exact lock wait / hold samples (ms) since the previous `proxyStats()` call. */
  readonly wait: { readonly foreground: number[]; readonly background: number[] };
  readonly hold: { readonly foreground: number[]; readonly background: number[] };
  /** Lock grants since the previous call: passed on inside the proxy, and from ZooKeeper. */
  readonly grants: { readonly local: number; readonly zookeeper: number };
  /** CPU time (user + system) the proxy process has used since it started, ms. */
  readonly cpuMs: number;
  /** How late the proxy's event loop ran a timer since the previous call, when that call asked for sampling (mean, p99; ms; else 0). */
  readonly eventLoopDelay: { readonly meanMs: number; readonly p99Ms: number };
}

/** Upstream clients of the reference bare proxy (bench/reference-proxy-process.ts). */
export const REFERENCE_CLIENTS = ['node-http', 'undici'] as const;
export type ReferenceClient = (typeof REFERENCE_CLIENTS)[number];

/**
 * The processes every workload runs against: ZooKeeper, the stand-in, two proxies on ZooKeeper
 * locks, one on the in-process lock, the bare reference proxies.
 */
export interface BenchEnvironment {
  readonly zookeeper: string;
  readonly directUrl: string;
  readonly proxyUrl: string;
  /** The reference bare proxy in front of the same stand-in, one per upstream client. */
  readonly referenceUrl: Readonly<Record<ReferenceClient, string>>;
  /** CPU time (user + system, ms) the reference proxy process has used since it started. */
  referenceCpuMs(client: ReferenceClient): Promise<number>;
  /**
   * The `node-http` reference proxy taking the least ZooKeeper lock a write can have
   * (bench/reference-zookeeper-lock.ts) on the bench's server: what any ZooKeeper-locking proxy
   * adds on this machine, for uncontended writes.
   */
  readonly lockingReferenceUrl: string;
  lockingReferenceCpuMs(): Promise<number>;
  /** Both proxy instances (separate processes and ZooKeeper sessions, one lock root); [0] is `proxyUrl`. */
  readonly proxyUrls: readonly string[];
  /** The same proxy on the in-process lock engine (no ZooKeeper): the edge and the write path alone. */
  readonly inProcessProxyUrl: string;
  /** CPU time (user + system, ms) the in-process-lock proxy has used since it started. */
  inProcessProxyCpuMs(): Promise<number>;
  /** Clears the stand-in's overlap counters (call before a run). */
  resetStandIn(): Promise<void>;
  /** Waits until the stand-in has no write in flight, then reads its overlap count. */
  overlaps(): Promise<number>;
  /** `sampleEventLoop`: sample the event loop's delay from now until the next call, which reports it (off otherwise: it costs the proxy CPU). */
  proxyStats(options?: { readonly sampleEventLoop?: boolean }): Promise<ProxyStats>;
  /** CPU the ZooKeeper server's JVM has used so far (null with `--zk`, or off Linux). */
  zookeeperCpu(): Promise<JvmCpu | null>;
  close(): Promise<void>;
}

async function getJson(url: string, method = 'GET'): Promise<unknown> {
  const response = await fetch(url, { method });
  if (!response.ok) throw new Error(`${method} ${url} → ${response.status}`);
  return response.json();
}

function samples(value: unknown, kind: 'wait' | 'hold', priority: 'foreground' | 'background'): number[] {
  const list = objectField(objectField(objectField(value, 'timings'), kind), priority);
  return Array.isArray(list) ? list.filter((n): n is number => typeof n === 'number') : [];
}

function parseProxyStats(value: unknown): ProxyStats {
  const zk = objectField(objectField(value, 'engine'), 'zkOps');
  return {
    zkOps: {
      create: numberField(zk, 'create'),
      delete: numberField(zk, 'delete'),
      get: numberField(zk, 'get'),
      getChildren: numberField(zk, 'getChildren'),
      multi: numberField(zk, 'multi'),
      multiOps: numberField(zk, 'multiOps'),
      multiRefused: numberField(zk, 'multiRefused'),
    },
    wait: { foreground: samples(value, 'wait', 'foreground'), background: samples(value, 'wait', 'background') },
    hold: { foreground: samples(value, 'hold', 'foreground'), background: samples(value, 'hold', 'background') },
    grants: {
      local: numberField(objectField(objectField(value, 'timings'), 'grants'), 'local'),
      zookeeper: numberField(objectField(objectField(value, 'timings'), 'grants'), 'zookeeper'),
    },
    cpuMs: cpuMsOf(value),
    eventLoopDelay: { meanMs: numberField(objectField(value, 'eventLoopDelay'), 'meanMs'), p99Ms: numberField(objectField(value, 'eventLoopDelay'), 'p99Ms') },
  };
}

/** CPU time (user + system, ms) a bench child with a `/stats` listener has used since it started. */
export async function childCpuMs(statsPort: number): Promise<number> {
  return cpuMsOf(await getJson(`http://127.0.0.1:${statsPort}/stats`));
}

/** `process.cpuUsage()` (µs) as reported by a bench child, in ms. */
function cpuMsOf(value: unknown): number {
  return (numberField(objectField(value, 'cpu'), 'user') + numberField(objectField(value, 'cpu'), 'system')) / 1000;
}

export async function startBenchEnvironment(options: BenchOptions): Promise<BenchEnvironment> {
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async (): Promise<void> => {
    for (const step of cleanups.reverse()) await step().catch((error: unknown) => console.error('bench cleanup:', error));
  };
  try {
    let zookeeper = options.zk;
    let zookeeperPid = (): number | undefined => undefined;
    if (zookeeper === null) {
      const cluster: ZooKeeperCluster = await startZooKeeper(1, { jvm: 'production' });
      cleanups.push(() => cluster.stop());
      zookeeper = cluster.connectString;
      zookeeperPid = () => cluster.nodes[0]?.pid();
    }
    const standIn: BenchChild<{ port: number }> = await spawnBenchChild(
      './stand-in-process.ts',
      { writeMs: options.writeMs, readMs: options.readMs, bulkDocMs: options.bulkDocMs },
      (line) => ({ port: numberField(line, 'port') }),
    );
    cleanups.push(() => standIn.stop());
    const directUrl = `http://127.0.0.1:${standIn.info.port}`;
    const deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-bench-dlq-'));
    cleanups.push(() => rm(deadLetterDir, { recursive: true, force: true }));
    const profileArgs = options.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', 'bench/results/profiles'] : [];
    const lockRoot = `/es-lock-proxy-bench/run-${Date.now().toString(36)}`;
    const startProxy = (extraArgs: readonly string[], lockService: 'zookeeper' | 'in-process' = 'zookeeper') =>
      spawnBenchChild(
        './proxy-process.ts',
        { zookeeper, lockRoot, upstream: directUrl, deadLetterDir, lockService },
        (line) => ({ proxyPort: numberField(line, 'proxyPort'), statsPort: numberField(line, 'statsPort') }),
        extraArgs,
      );
    const proxy = await startProxy([...PROXY_NODE_FLAGS, ...profileArgs]);
    cleanups.push(() => proxy.stop());
    const startReference = async (client: ReferenceClient, lockOn?: string): Promise<{ port: number; statsPort: number }> => {
      const reference = await spawnBenchChild('./reference-proxy-process.ts', { upstream: directUrl, client, zookeeper: lockOn }, (line) => ({
        port: numberField(line, 'port'),
        statsPort: numberField(line, 'statsPort'),
      }));
      cleanups.push(() => reference.stop());
      return reference.info;
    };
    const references = new Map<ReferenceClient, { port: number; statsPort: number }>();
    for (const client of REFERENCE_CLIENTS) references.set(client, await startReference(client));
    const lockingReference = await startReference('node-http', zookeeper);
    const referenceOf = (client: ReferenceClient): { port: number; statsPort: number } => {
      const info = references.get(client);
      if (info === undefined) throw new Error(`no reference proxy for ${client}`);
      return info;
    };
    const second = await startProxy(PROXY_NODE_FLAGS);
    cleanups.push(() => second.stop());
    const inProcess = await startProxy(PROXY_NODE_FLAGS, 'in-process');
    cleanups.push(() => inProcess.stop());
    const zk = zookeeper;
    return {
      zookeeper: zk,
      directUrl,
      proxyUrl: `http://127.0.0.1:${proxy.info.proxyPort}`,
      referenceUrl: {
        'node-http': `http://127.0.0.1:${referenceOf('node-http').port}`,
        undici: `http://127.0.0.1:${referenceOf('undici').port}`,
      },
      referenceCpuMs: async (client) => cpuMsOf(await getJson(`http://127.0.0.1:${referenceOf(client).statsPort}/stats`)),
      lockingReferenceUrl: `http://127.0.0.1:${lockingReference.port}`,
      lockingReferenceCpuMs: async () => cpuMsOf(await getJson(`http://127.0.0.1:${lockingReference.statsPort}/stats`)),
      proxyUrls: [`http://127.0.0.1:${proxy.info.proxyPort}`, `http://127.0.0.1:${second.info.proxyPort}`],
      inProcessProxyUrl: `http://127.0.0.1:${inProcess.info.proxyPort}`,
      inProcessProxyCpuMs: async () => cpuMsOf(await getJson(`http://127.0.0.1:${inProcess.info.statsPort}/stats`)),
      resetStandIn: async () => {
        await getJson(`${directUrl}/_bench/reset`, 'POST');
      },
      overlaps: async () => {
        const deadline = Date.now() + 10_000;
        for (;;) {
          const report = await getJson(`${directUrl}/_bench/overlaps`);
          if (numberField(report, 'writesInFlight') === 0 || Date.now() > deadline) return numberField(report, 'overlaps');
          await sleep(50);
        }
      },
      proxyStats: async (options) => parseProxyStats(await getJson(`http://127.0.0.1:${proxy.info.statsPort}/stats${options?.sampleEventLoop === true ? '?eventLoop=on' : ''}`)),
      zookeeperCpu: () => jvmCpu(zookeeperPid()),
      close: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
