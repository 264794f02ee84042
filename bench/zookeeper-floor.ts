import { performance } from 'node:perf_hooks';
import type { ZkClient } from '../src/zookeeper-client/zk-client.js';
import { connectRawClient } from '../test/support/zk-raw-client.js';
import { percentile } from './load.js';
import { untilDue } from './paced-load.js';
import type { ZkOp } from '../src/zookeeper-client/zk-multi.js';
import { BENCH_ROOT, benchLockData, ensureBenchRoot } from './bench-lock-nodes.js';

/**
 * What ZooKeeper itself costs a lock, measured on the bench's own server in the same run: the
 * floor under any ZooKeeper lock, whatever its client does. Written with the raw client and the
 * proxy's own node layout (document container + ephemeral `privateLock` carrying the same owner
 * data), so the figures differ from the proxy's only by the proxy's own work.
 */
export interface ZooKeeperFloor {
  /** One uncontended write's lock taken: container + privateLock in one transaction (p50, sequential). */
  readonly lockCreateP50Ms: number;
  /** Its p99: ZooKeeper's own tail (fsync, the JVM), under any lock's tail. */
  readonly lockCreateP99Ms: number;
  /** The whole pair: that create, then the delete (p50, sequential). */
  readonly lockPairP50Ms: number;
  /** The raw client's CPU (this process) per create + delete pair. */
  readonly lockPairCpuMs: number;
}

export interface BulkFloor {
  /** One transaction creating `documents` containers + privateLocks (p50 of the repetitions). */
  readonly createP50Ms: number;
  /** The transaction deleting them again (p50). */
  readonly deleteP50Ms: number;
}

const ROOT = `${BENCH_ROOT}/floor`;
const DATA = benchLockData('PUT /bench-uncontended/_doc/00000000');

/** Percentiles by the same rule as the load generator's figures. */
function p(values: readonly number[], at: number): number {
  return percentile([...values].sort((a, b) => a - b), at);
}

function p50(values: readonly number[]): number {
  return p(values, 50);
}

async function withClient<T>(zookeeper: string, use: (client: ZkClient) => Promise<T>): Promise<T> {
  const { client, close } = await connectRawClient(zookeeper, 10_000);
  try {
    await ensureBenchRoot(client, ROOT);
    return await use(client);
  } finally {
    await close();
  }
}

function createOps(prefix: string, count: number): ZkOp[] {
  const ops: ZkOp[] = [];
  for (let i = 0; i < count; i++) {
    ops.push({ type: 'create', path: `${ROOT}/${prefix}-${i}`, mode: 'container' });
    ops.push({ type: 'create', path: `${ROOT}/${prefix}-${i}/privateLock`, data: DATA, mode: 'ephemeral' });
  }
  return ops;
}

function deleteOps(prefix: string, count: number): ZkOp[] {
  const ops: ZkOp[] = [];
  for (let i = 0; i < count; i++) ops.push({ type: 'delete', path: `${ROOT}/${prefix}-${i}/privateLock` }, { type: 'delete', path: `${ROOT}/${prefix}-${i}` });
  return ops;
}

export interface FloorOptions {
  /** Measured pairs (500). */
  readonly pairs?: number;
  /** Pairs before them, not measured (as many as `pairs`). */
  readonly warmupPairs?: number;
  readonly ratePerS?: number;
}

/**
 * `pairs` sequential lock pairs after `warmupPairs`; with `ratePerS`, each pair starts at an even
 * pace instead of right after the previous one. The pace matters: a server that idles between
 * requests answers slower than one kept busy back to back (its threads park between them), so an
 * open loop's floor is measured at the open loop's rate.
 */
export function measureLockFloor(zookeeper: string, options: FloorOptions = {}): Promise<ZooKeeperFloor> {
  const { pairs = 500, warmupPairs = pairs, ratePerS } = options;
  return withClient(zookeeper, async (client) => {
    const run = Date.now().toString(36);
    const creates: number[] = [];
    const whole: number[] = [];
    const pair = async (id: string): Promise<void> => {
      const start = performance.now();
      await client.multi(createOps(id, 1));
      creates.push(performance.now() - start);
      await client.multi(deleteOps(id, 1));
      whole.push(performance.now() - start);
    };
    const pairsOf = async (prefix: string, count: number): Promise<void> => {
      const started = performance.now();
      for (let i = 0; i < count; i++) {
        if (ratePerS !== undefined) await untilDue(started, i, ratePerS);
        await pair(`${prefix}${run}-${i}`);
      }
    };
    await pairsOf('w', warmupPairs);
    creates.length = 0;
    whole.length = 0;
    const cpuBefore = process.cpuUsage();
    await pairsOf('m', pairs);
    const cpu = process.cpuUsage(cpuBefore);
    return { lockCreateP50Ms: p50(creates), lockCreateP99Ms: p(creates, 99), lockPairP50Ms: p50(whole), lockPairCpuMs: (cpu.user + cpu.system) / 1000 / pairs };
  });
}

/** One transaction for `documents` fresh documents and one deleting them, `repetitions` times. */
export function measureBulkFloor(zookeeper: string, documents: number, repetitions = 5): Promise<BulkFloor> {
  return withClient(zookeeper, async (client) => {
    const run = Date.now().toString(36);
    const creates: number[] = [];
    const deletes: number[] = [];
    for (let r = 0; r <= repetitions; r++) {
      const prefix = `b${run}-${r}`;
      let start = performance.now();
      await client.multi(createOps(prefix, documents));
      const created = performance.now() - start;
      start = performance.now();
      await client.multi(deleteOps(prefix, documents));
      // The first repetition warms up (server and client).
      if (r > 0) {
        creates.push(created);
        deletes.push(performance.now() - start);
      }
    }
    return { createP50Ms: p50(creates), deleteP50Ms: p50(deletes) };
  });
}

export interface StreamsFloor {
  /** Documents locked and unlocked per second over all streams. */
  readonly docsPerS: number;
  /** Bulks' worth of documents (one create and one delete transaction each) done. */
  readonly bulks: number;
  /** The raw client's CPU (this process) per document. */
  readonly clientCpuMsPerDoc: number;
}

export interface StreamsFloorOptions {
  readonly streams: number;
  /** Documents per bulk: one create transaction and one delete transaction each. */
  readonly documents: number;
  readonly durationS: number;
}

/**
 * The design's floor for concurrent bulks: `streams` loops on one session (as the proxy's streams
 * share its one session), each creating a bulk's document containers + privateLocks in one
 * transaction and deleting them in another, back to back, for `durationS`. Nothing else: what a
 * proxy doing no work of its own would reach with the same transactions on the same server.
 */
export function measureStreamsFloor(zookeeper: string, options: StreamsFloorOptions): Promise<StreamsFloor> {
  const { streams, documents, durationS } = options;
  return withClient(zookeeper, async (client) => {
    const run = Date.now().toString(36);
    let bulks = 0;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const until = started + durationS * 1000;
    const stream = async (s: number): Promise<void> => {
      for (let r = 0; performance.now() < until; r++) {
        const prefix = `s${run}-${s}-${r}`;
        await client.multi(createOps(prefix, documents));
        await client.multi(deleteOps(prefix, documents));
        bulks++;
      }
    };
    await Promise.all(Array.from({ length: streams }, (_, s) => stream(s)));
    const elapsedS = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const docs = bulks * documents;
    return { docsPerS: docs / elapsedS, bulks, clientCpuMsPerDoc: (cpu.user + cpu.system) / 1000 / Math.max(1, docs) };
  });
}
