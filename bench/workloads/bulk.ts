import { lastZxid } from '../../test/support/zookeeper-server.js';
import type { BenchEnvironment, ProxyStats } from '../bench-environment.js';
import { jvmCpuSince, type JvmCpu } from '../jvm-cpu.js';
import { measureBulkFloor } from '../zookeeper-floor.js';
import { mergeLoadResults, runLoad, type LoadResult, type LoadSpec } from '../load.js';
import { inTurns, randomBelow, round, SLICES, target, type Workload, type WorkloadContext } from '../workload-result.js';

export const BULK_INDEX = 'bench-bulk';
const INDEX = BULK_INDEX;
export const BULK_SIZE = 1_000;
export const BULK_ID_POOL = 10_000;
const ID_POOL = BULK_ID_POOL;
export const BULK_CONNECTIONS = 2;
const TRICKLE_CONNECTIONS = 4;
const TRICKLE_RATE = 50;

/** Bulk bodies of 1,000 consecutive ids (wrapping) from a random start in a pool, as NDJSON index actions. */
export function bulkBodies(index: string, pool: number): () => string {
  return () => {
    const start = randomBelow(pool);
    const lines: string[] = [];
    for (let i = 0; i < BULK_SIZE; i++) lines.push(`{"index":{"_index":"${index}","_id":"b-${(start + i) % pool}"}}`, `{"field":"value","n":${i}}`);
    return lines.join('\n') + '\n';
  };
}

/**
 * Documents per second of `BULK_CONNECTIONS` closed loops of bulks: from the bulks' own mean time.
 * (Not from autocannon's run time, which ends on its one-second tick after the last bulk of an
 * `amount`: every run read a round 5,000, 10,000 or 20,000 documents per second.)
 */
export function bulkDocsPerS(bulks: LoadResult): number {
  return (BULK_CONNECTIONS * BULK_SIZE * 1000) / Math.max(1e-9, bulks.meanMs);
}

/** Bulks per measured run (and per warm-up): about 2 per second of --duration, at least 2 per connection. */
export function bulkCount(durationS: number): number {
  return Math.max(2 * BULK_CONNECTIONS, Math.round(2 * durationS));
}

/** The bulk requests of a load: their bodies and any headers besides the workload's own. */
export interface BulkShape {
  readonly body: () => string | Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A fixed number of bulks (a slow bulk must finish to count), with the trickle running until they
 * are done. `shape` replaces the bulks' bodies (the compressed variant); the trickle stays.
 */
export async function bulksWithTrickle(baseUrl: string, bulks: number, shape?: BulkShape): Promise<[LoadResult, LoadResult]> {
  const [bulkSpec, trickleSpec] = specs(baseUrl);
  const shaped = shape === undefined ? bulkSpec : { ...bulkSpec, body: shape.body, headers: { ...bulkSpec.headers, ...shape.headers } };
  const bulkRun = runLoad({ ...shaped, amount: bulks });
  const trickleRun = runLoad({ ...trickleSpec, stopWhen: bulkRun });
  return [await bulkRun, await trickleRun];
}

function specs(baseUrl: string): [LoadSpec, LoadSpec] {
  const durationS = 600;
  return [
    {
      baseUrl,
      connections: BULK_CONNECTIONS,
      durationS,
      method: 'POST',
      pathFor: () => '/_bulk',
      body: bulkBodies(INDEX, ID_POOL),
      headers: { 'content-type': 'application/x-ndjson', 'X-Lock-Type': 'background' },
    },
    {
      baseUrl,
      connections: TRICKLE_CONNECTIONS,
      durationS,
      method: 'PUT',
      pathFor: () => `/${INDEX}/_doc/b-${randomBelow(ID_POOL)}`,
      body: () => '{"field":"foreground","n":0}',
      headers: { 'X-Lock-Type': 'foreground' },
      overallRate: TRICKLE_RATE,
    },
  ];
}

/** The measured bulks of one way, a quarter in each slice (at least one per connection). */
export function bulksPerSlice(durationS: number): number {
  return Math.max(BULK_CONNECTIONS, Math.round(bulkCount(durationS) / SLICES));
}

/** What the proxy's slices cost, read around those slices only. */
interface ProxyCounters {
  cpuMs: number;
  reads: number;
  transactions: bigint;
  /** The proxy's own write requests (transactions, creates, deletes): the rest of `transactions` is other sessions' and the server's container reaper's. */
  proxyTransactions: number;
  /** Null when the server's CPU cannot be read (`--zk`, off Linux). */
  zkCpu: JvmCpu | null;
}

/** One proxy slice (its bulks with the trickle), adding what it cost to `counters`. */
async function proxySlice(env: BenchEnvironment, bulks: number, counters: ProxyCounters): Promise<[LoadResult, LoadResult]> {
  const before = { stats: await env.proxyStats(), zxid: await zxidOf(env.zookeeper), zkCpu: await env.zookeeperCpu() };
  const loads = await bulksWithTrickle(env.proxyUrl, bulks);
  const after = { stats: await env.proxyStats(), zxid: await zxidOf(env.zookeeper), zkCpu: await env.zookeeperCpu() };
  counters.cpuMs += after.stats.cpuMs - before.stats.cpuMs;
  counters.reads += readsDelta(before.stats, after.stats);
  counters.proxyTransactions += writesDelta(before.stats, after.stats);
  counters.transactions += after.zxid - before.zxid;
  counters.zkCpu = addedCpu(counters.zkCpu, jvmCpuSince(before.zkCpu, after.zkCpu));
  return loads;
}

/**
 * The stand-in and the proxy in turns (`inTurns`), each slice a quarter of the bulks with the
 * trickle. Run one after the other, the load from elsewhere on this shared machine drifted between
 * the two and read as a ratio: the same code gave 1.43x to 1.90x in back-to-back bulk-only runs.
 */
async function alternating(context: WorkloadContext): Promise<{ direct: [LoadResult, LoadResult]; proxy: [LoadResult, LoadResult]; counters: ProxyCounters }> {
  const { env, options } = context;
  const urls = { direct: env.directUrl, proxy: env.proxyUrl };
  const perSlice = bulksPerSlice(options.durationS);
  const counters: ProxyCounters = { cpuMs: 0, reads: 0, transactions: 0n, proxyTransactions: 0, zkCpu: { totalMs: 0, compilerMs: 0 } };
  const slices = await inTurns(
    ['direct', 'proxy'] as const,
    SLICES,
    (way) => (options.warmupS > 0 ? bulksWithTrickle(urls[way], bulkCount(options.warmupS)) : Promise.resolve()),
    (way) => (way === 'proxy' ? proxySlice(env, perSlice, counters) : bulksWithTrickle(urls.direct, perSlice)),
  );
  const merged = (parts: readonly [LoadResult, LoadResult][] = []): [LoadResult, LoadResult] => [mergeLoadResults(parts.map((p) => p[0])), mergeLoadResults(parts.map((p) => p[1]))];
  return { direct: merged(slices.get('direct')), proxy: merged(slices.get('proxy')), counters };
}

function addedCpu(total: JvmCpu | null, slice: JvmCpu | null): JvmCpu | null {
  if (total === null || slice === null) return null;
  return { totalMs: total.totalMs + slice.totalMs, compilerMs: total.compilerMs + slice.compilerMs };
}

function writesDelta(before: ProxyStats, after: ProxyStats): number {
  const { zkOps: a } = after;
  const { zkOps: b } = before;
  return a.multi - b.multi + (a.create - b.create) + (a.delete - b.delete);
}

function readsDelta(before: ProxyStats, after: ProxyStats): number {
  return after.zkOps.get - before.zkOps.get + (after.zkOps.getChildren - before.zkOps.getChildren);
}

/** The ZooKeeper server's own count of transactions (its zxid), whoever caused them. */
function zxidOf(connect: string): Promise<bigint> {
  return lastZxid(Number(connect.split(',')[0]?.split(':')[1]));
}

/** Background bulks of 1,000 documents while foreground single writes hit some of the same ids. */
export const bulk: Workload = async (context) => {
  const { env, options } = context;
  const { direct, proxy, counters } = await alternating(context);
  const [directBulks, directSingles] = direct;
  const [proxyBulks, proxySingles] = proxy;
  const { zkCpu, reads } = counters;
  const transactions = Number(counters.transactions);
  const proxyCpuMsPerBulk = counters.cpuMs / Math.max(1, proxyBulks.ok);
  const documents = proxyBulks.ok * BULK_SIZE + proxySingles.ok;
  const timeRatio = proxyBulks.p50Ms / directBulks.p50Ms;
  const floor = await measureBulkFloor(env.zookeeper, BULK_SIZE);
  const txnsPerDoc = transactions / Math.max(1, documents);
  const fgRatio = proxySingles.p99Ms / directBulks.p50Ms;
  return {
    workload: 'bulk',
    summary: {
      direct_bulk_p50_ms: round(directBulks.p50Ms),
      proxy_bulk_p50_ms: round(proxyBulks.p50Ms),
      bulk_time_ratio: round(timeRatio),
      zk_floor_create_ms: round(floor.createP50Ms),
      zk_floor_delete_ms: round(floor.deleteP50Ms),
      bulk_time_ratio_vs_direct_plus_zk_floor: round(proxyBulks.p50Ms / (directBulks.p50Ms + floor.createP50Ms)),
      direct_docs_per_s: round(bulkDocsPerS(directBulks), 0),
      proxy_docs_per_s: round(bulkDocsPerS(proxyBulks), 0),
      zk_transactions_per_doc: round(txnsPerDoc, 4),
      zk_proxy_transactions_per_doc: round(counters.proxyTransactions / Math.max(1, documents), 4),
      zk_reads_per_doc: round(reads / Math.max(1, documents)),
      proxy_cpu_ms_per_bulk: round(proxyCpuMsPerBulk),
      zk_server_cpu_ms_per_bulk: zkCpu === null ? null : round(zkCpu.totalMs / Math.max(1, proxyBulks.ok)),
      zk_server_jit_cpu_ms_per_bulk: zkCpu === null ? null : round(zkCpu.compilerMs / Math.max(1, proxyBulks.ok)),
      direct_fg_p99_ms: round(directSingles.p99Ms),
      proxy_fg_p50_ms: round(proxySingles.p50Ms),
      proxy_fg_p99_ms: round(proxySingles.p99Ms),
      proxy_bulks: proxyBulks.ok,
      proxy_non2xx: proxyBulks.non2xx + proxySingles.non2xx + proxyBulks.errors + proxySingles.errors,
    },
    runs: { direct_bulks: directBulks, direct_singles: directSingles, proxy_bulks: proxyBulks, proxy_singles: proxySingles },
    targets: [
      target('bulk of 1,000 docs <= 1.5x direct (p50 time)', timeRatio, timeRatio <= 1.5),
      target('bulk <= 0.1 ZooKeeper transactions per document (server zxid)', txnsPerDoc, txnsPerDoc <= 0.1),
      target('foreground writes during bulks: p99 <= 2x one bulk direct (p50)', fgRatio, fgRatio <= 2),
    ],
    notes: [
      `${SLICES * bulksPerSlice(options.durationS)} bulks per way in ${SLICES} alternating slices (direct, proxy, direct, ...) over ${BULK_CONNECTIONS} connections, background (${BULK_SIZE} consecutive ids from a pool of ${ID_POOL}); foreground PUTs ${TRICKLE_RATE}/s on random ids of the pool`,
      `zk_floor_*: one transaction creating ${BULK_SIZE} document containers + privateLocks on the same server, and the one deleting them (raw client, bench/zookeeper-floor.ts, p50 of 5): what ZooKeeper itself needs to lock and unlock a bulk's fresh documents in one commit each`,
      `stand-in bulk time = ${options.writeMs} ms + ${options.bulkDocMs} ms per document; proxy_cpu_ms_per_bulk = the proxy process's CPU over its measured slices (its foreground writes included) / bulks; zk_server_cpu_ms_per_bulk the same for the ZooKeeper server's JVM (all its threads; _jit_: its JIT compiler threads); ZooKeeper transactions = the server's zxid difference over the proxy's measured slices (every transaction, the container reaper's included) / documents written (bulk items + foreground writes); zk_proxy_transactions_per_doc: the proxy's own (its transactions, creates and deletes over the same slices), the rest being the server's container reaper's`,
    ],
  };
};
