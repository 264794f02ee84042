import { lastZxid } from '../../test/support/zookeeper-server.js';
import type { BenchEnvironment, ProxyStats } from '../bench-environment.js';
import { runLoad, mergeLoadResults, type LoadResult, type LoadSpec } from '../load.js';
import { measureStreamsFloor, type StreamsFloor } from '../zookeeper-floor.js';
import type { JvmCpu } from '../jvm-cpu.js';
import { inTurns, round, slicesFor, target, type Workload, type WorkloadContext } from '../workload-result.js';

const INDEX = 'bench-streams';
/** Concurrent streams of bulks, as a propagation job's workers send them. */
export const STREAMS = 4;
export const STREAM_BULK = 500;
export const SINGLE_BULK = 1_000;
/** Ids wrap around this pool, far more than a run names. */
const ID_POOL = 10_000_000;

/** The next id of the bulks with ids: one counter for the whole run, so no document is named twice. */
let nextId = 0;

/**
 * NDJSON bodies of `size` index actions; with ids, each body takes the next `size` ids of one
 * counter, so every bulk names documents no bulk named before (a propagation job's workers split
 * their documents, and the floor creates fresh ones too); without ids Elasticsearch generates
 * them, as log shippers send.
 */
export function streamBodies(size: number, withIds: boolean): () => string {
  return () => {
    const lines: string[] = [];
    for (let i = 0; i < size; i++) {
      const action = withIds ? `{"index":{"_index":"${INDEX}","_id":"s-${(nextId + i) % ID_POOL}"}}` : `{"index":{"_index":"${INDEX}"}}`;
      lines.push(action, `{"field":"value","n":${i}}`);
    }
    if (withIds) nextId += size;
    return lines.join('\n') + '\n';
  };
}

function spec(baseUrl: string, connections: number, size: number, withIds: boolean, durationS: number): LoadSpec {
  return {
    baseUrl,
    connections,
    durationS,
    method: 'POST',
    pathFor: () => '/_bulk',
    body: streamBodies(size, withIds),
    headers: { 'content-type': 'application/x-ndjson', 'X-Lock-Type': 'background' },
  };
}

/** Documents per second of `connections` closed loops of `size`-document bulks, from their mean time. */
function docsPerS(load: LoadResult, connections: number, size: number): number {
  return (connections * size * 1000) / Math.max(1e-9, load.meanMs);
}

/** One way's slices: its loads and the CPU (ms) its serving process and ZooKeeper used meanwhile. */
interface WaySlices {
  load: LoadResult[];
  cpuMs: number;
  zkCpuMs: number;
  /** Of which the server's JIT compiler threads (warming up, not serving). */
  zkJitMs: number;
  floor: StreamsFloor[];
  /** ZooKeeper transactions committed meanwhile (the server's zxid), whoever caused them. */
  transactions: number;
  /** The proxy's ZooKeeper requests meanwhile: transactions (multi), the ops they held, reads. */
  multis: number;
  multiOps: number;
  /** Of the transactions, those ZooKeeper refused as a whole (each costs a round trip and nearly a commit's server work). */
  multiRefused: number;
  /** Creates and deletes sent on their own, outside transactions. */
  singleOps: number;
  reads: number;
}

/** The ZooKeeper server's own count of transactions (its zxid). */
async function zxidOf(connect: string): Promise<number> {
  return Number(await lastZxid(Number(connect.split(',')[0]?.split(':')[1])));
}

function addZkRequests(total: WaySlices, before: ProxyStats['zkOps'], after: ProxyStats['zkOps']): void {
  total.multis += after.multi - before.multi;
  total.multiOps += after.multiOps - before.multiOps;
  total.multiRefused += after.multiRefused - before.multiRefused;
  total.reads += after.get - before.get + (after.getChildren - before.getChildren);
  total.singleOps += after.create - before.create + (after.delete - before.delete);
}

const WAYS = ['direct', 'proxy', 'bare', 'least', 'floor'] as const;
type Way = (typeof WAYS)[number];

function noSlices(): WaySlices {
  return { load: [], cpuMs: 0, zkCpuMs: 0, zkJitMs: 0, floor: [], transactions: 0, multis: 0, multiOps: 0, multiRefused: 0, singleOps: 0, reads: 0 };
}

/** What one slice of `way` runs, and how its serving process's CPU is read (0: not read). */
function slicer(env: BenchEnvironment): Record<Way, { run: (durationS: number) => Promise<LoadResult | StreamsFloor>; cpuMs: () => Promise<number> }> {
  const streams = (url: string) => (d: number) => runLoad(spec(url, STREAMS, STREAM_BULK, true, d));
  return {
    direct: { run: streams(env.directUrl), cpuMs: async () => 0 },
    proxy: { run: streams(env.proxyUrl), cpuMs: async () => (await env.proxyStats()).cpuMs },
    bare: { run: streams(env.referenceUrl['node-http']), cpuMs: () => env.referenceCpuMs('node-http') },
    least: { run: streams(env.lockingReferenceUrl), cpuMs: () => env.lockingReferenceCpuMs() },
    floor: { run: (d) => measureStreamsFloor(env.zookeeper, { streams: STREAMS, documents: STREAM_BULK, durationS: d }), cpuMs: async () => 0 },
  };
}

function isFloor(value: LoadResult | StreamsFloor): value is StreamsFloor {
  return 'docsPerS' in value;
}

/** The four ways of the concurrent streams with ids, in turns, each slice a share of the duration. */
async function streamsWithIds(context: WorkloadContext): Promise<Record<Way, WaySlices>> {
  const { env, options } = context;
  const slices = slicesFor(options.durationS);
  const sliceS = options.durationS / slices;
  const ways = slicer(env);
  const zkCpu = async (): Promise<JvmCpu> => (await env.zookeeperCpu()) ?? { totalMs: Number.NaN, compilerMs: Number.NaN };
  const totals: Record<Way, WaySlices> = { direct: noSlices(), proxy: noSlices(), bare: noSlices(), least: noSlices(), floor: noSlices() };
  await inTurns(
    WAYS,
    slices,
    (way) => (options.warmupS > 0 ? ways[way].run(options.warmupS) : Promise.resolve()),
    async (way) => {
      const [cpuBefore, zkBefore, zxidBefore, opsBefore] = [await ways[way].cpuMs(), await zkCpu(), await zxidOf(env.zookeeper), (await env.proxyStats()).zkOps];
      const result = await ways[way].run(sliceS);
      const total = totals[way];
      total.cpuMs += (await ways[way].cpuMs()) - cpuBefore;
      const zkAfter = await zkCpu();
      total.zkCpuMs += zkAfter.totalMs - zkBefore.totalMs;
      total.zkJitMs += zkAfter.compilerMs - zkBefore.compilerMs;
      total.transactions += (await zxidOf(env.zookeeper)) - zxidBefore;
      addZkRequests(total, opsBefore, (await env.proxyStats()).zkOps);
      if (isFloor(result)) total.floor.push(result);
      else total.load.push(result);
    },
  );
  return totals;
}

/** `connections` closed loops of `size`-document bulks, straight and through the proxy in turns. */
async function directVersusProxy(context: WorkloadContext, connections: number, size: number, withIds: boolean): Promise<{ direct: LoadResult; proxy: LoadResult }> {
  const { env, options } = context;
  const slices = slicesFor(options.durationS);
  const urls = { direct: env.directUrl, proxy: env.proxyUrl };
  const parts = await inTurns(
    ['direct', 'proxy'] as const,
    slices,
    (way) => (options.warmupS > 0 ? runLoad(spec(urls[way], connections, size, withIds, options.warmupS)) : Promise.resolve()),
    (way) => runLoad(spec(urls[way], connections, size, withIds, options.durationS / slices)),
  );
  return { direct: mergeLoadResults(parts.get('direct') ?? []), proxy: mergeLoadResults(parts.get('proxy') ?? []) };
}

function floorDocsPerS(floors: readonly StreamsFloor[]): number {
  const bulks = floors.reduce((sum, f) => sum + f.bulks, 0);
  const seconds = floors.reduce((sum, f) => sum + (f.bulks * STREAM_BULK) / Math.max(1e-9, f.docsPerS), 0);
  return (bulks * STREAM_BULK) / Math.max(1e-9, seconds);
}

/**
 * Bulks as propagation jobs send them: 4 concurrent streams of 500-document bulks with ids,
 * against the stand-in straight, the bare proxy, the least ZooKeeper lock for bulks (the bare
 * proxy taking the floor's two transactions around each bulk) and the design's ZooKeeper floor
 * (the same transactions from a raw client, no proxy, no Elasticsearch); then one 1,000-document bulk at a time, and the
 * streams without ids, each against the stand-in straight.
 */
export const bulkStreams: Workload = async (context) => {
  const { env, options } = context;
  await env.resetStandIn();
  const ways = await streamsWithIds(context);
  const single = await directVersusProxy(context, 1, SINGLE_BULK, true);
  const noIds = await directVersusProxy(context, STREAMS, STREAM_BULK, false);
  const overlaps = await env.overlaps();
  const [direct, proxy, bare, least] = [mergeLoadResults(ways.direct.load), mergeLoadResults(ways.proxy.load), mergeLoadResults(ways.bare.load), mergeLoadResults(ways.least.load)];
  const floorRate = floorDocsPerS(ways.floor.floor);
  const floorDocs = ways.floor.floor.reduce((sum, f) => sum + f.bulks * STREAM_BULK, 0);
  const proxyRate = docsPerS(proxy, STREAMS, STREAM_BULK);
  const directRate = docsPerS(direct, STREAMS, STREAM_BULK);
  const proxyDocs = proxy.ok * STREAM_BULK;
  const proxyCpuPerDoc = ways.proxy.cpuMs / Math.max(1, proxyDocs);
  const bareCpuPerDoc = ways.bare.cpuMs / Math.max(1, bare.ok * STREAM_BULK);
  const vsFloor = proxyRate / floorRate;
  const leastRate = docsPerS(least, STREAMS, STREAM_BULK);
  const leastDocs = least.ok * STREAM_BULK;
  const leastCpuPerDoc = ways.least.cpuMs / Math.max(1, leastDocs);
  const leastRatio = proxyRate / leastRate;
  const singleRatio = single.proxy.p50Ms / single.direct.p50Ms;
  const noIdsRatio = docsPerS(noIds.proxy, STREAMS, STREAM_BULK) / docsPerS(noIds.direct, STREAMS, STREAM_BULK);
  return {
    workload: 'bulk-streams',
    summary: {
      direct_docs_per_s: round(directRate, 0),
      proxy_docs_per_s: round(proxyRate, 0),
      bare_docs_per_s: round(docsPerS(bare, STREAMS, STREAM_BULK), 0),
      zk_floor_docs_per_s: round(floorRate, 0),
      proxy_vs_zk_floor: round(vsFloor),
      proxy_vs_direct: round(proxyRate / directRate),
      least_lock_docs_per_s: round(leastRate, 0),
      least_lock_vs_zk_floor: round(leastRate / floorRate),
      least_lock_vs_direct: round(leastRate / directRate),
      proxy_vs_least_lock: round(leastRatio),
      least_lock_cpu_ms_per_doc: round(leastCpuPerDoc, 4),
      least_lock_zk_server_cpu_ms_per_doc: round(ways.least.zkCpuMs / Math.max(1, leastDocs), 4),
      proxy_cpu_ms_per_doc: round(proxyCpuPerDoc, 4),
      bare_cpu_ms_per_doc: round(bareCpuPerDoc, 4),
      cpu_per_doc_ratio_vs_bare: round(proxyCpuPerDoc / bareCpuPerDoc),
      zk_server_cpu_ms_per_doc: round(ways.proxy.zkCpuMs / Math.max(1, proxyDocs), 4),
      zk_server_jit_cpu_ms_per_doc: round(ways.proxy.zkJitMs / Math.max(1, proxyDocs), 4),
      zk_transactions_per_bulk: round((ways.proxy.transactions / Math.max(1, proxyDocs)) * STREAM_BULK, 2),
      zk_floor_transactions_per_bulk: round((ways.floor.transactions / Math.max(1, floorDocs)) * STREAM_BULK, 2),
      proxy_multis_per_bulk: round((ways.proxy.multis / Math.max(1, proxyDocs)) * STREAM_BULK, 2),
      proxy_refused_multis_per_bulk: round((ways.proxy.multiRefused / Math.max(1, proxyDocs)) * STREAM_BULK, 2),
      proxy_multi_ops_per_doc: round(ways.proxy.multiOps / Math.max(1, proxyDocs), 3),
      proxy_single_ops_per_bulk: round((ways.proxy.singleOps / Math.max(1, proxyDocs)) * STREAM_BULK, 2),
      proxy_zk_reads_per_doc: round(ways.proxy.reads / Math.max(1, proxyDocs), 3),
      zk_floor_server_cpu_ms_per_doc: round(ways.floor.zkCpuMs / Math.max(1, floorDocs), 4),
      zk_floor_server_jit_cpu_ms_per_doc: round(ways.floor.zkJitMs / Math.max(1, floorDocs), 4),
      zk_floor_client_cpu_ms_per_doc: round(ways.floor.floor.reduce((sum, f) => sum + f.clientCpuMsPerDoc * f.bulks, 0) / Math.max(1, floorDocs / STREAM_BULK), 4),
      direct_bulk_p50_ms: round(direct.p50Ms),
      proxy_bulk_p50_ms: round(proxy.p50Ms),
      single_direct_p50_ms: round(single.direct.p50Ms),
      single_proxy_p50_ms: round(single.proxy.p50Ms),
      single_time_ratio: round(singleRatio),
      no_ids_direct_docs_per_s: round(docsPerS(noIds.direct, STREAMS, STREAM_BULK), 0),
      no_ids_proxy_docs_per_s: round(docsPerS(noIds.proxy, STREAMS, STREAM_BULK), 0),
      no_ids_vs_direct: round(noIdsRatio),
      overlaps,
      proxy_non2xx: proxy.non2xx + proxy.errors + single.proxy.non2xx + single.proxy.errors + noIds.proxy.non2xx + noIds.proxy.errors,
    },
    runs: { direct, proxy, bare, least_lock: least, single_direct: single.direct, single_proxy: single.proxy, no_ids_direct: noIds.direct, no_ids_proxy: noIds.proxy },
    targets: [
      target(`${STREAMS} streams of ${STREAM_BULK}-doc bulks with ids >= 0.85x the ZooKeeper floor (documents/s)`, vsFloor, vsFloor >= 0.85),
      target(`${STREAMS} streams of ${STREAM_BULK}-doc bulks with ids >= 0.85x the least ZooKeeper lock for bulks (documents/s, same machine share)`, leastRatio, leastRatio >= 0.85),
      target(`one ${SINGLE_BULK.toLocaleString('en')}-doc bulk at a time <= 1.5x direct (p50 time)`, singleRatio, singleRatio <= 1.5),
      target(`${STREAMS} streams of bulks without ids >= 0.95x direct (documents/s)`, noIdsRatio, noIdsRatio >= 0.95),
      target('bulk streams: 0 overlapping writes at the stand-in', overlaps, overlaps === 0),
    ],
    notes: [
      `${STREAMS} closed loops of ${STREAM_BULK}-document background bulks with ids (consecutive ids of one counter: every bulk names fresh documents), straight to the stand-in, through the proxy, through the bare node:http proxy, through the least ZooKeeper lock for bulks and as the ZooKeeper floor, in ${slicesFor(options.durationS)} alternating slices; documents/s = ${STREAMS} × ${STREAM_BULK} / mean bulk time`,
      `zk_floor_*: the design's ZooKeeper work for the same streams with no proxy — ${STREAMS} loops on one raw-client session (bench/zookeeper-floor.ts), each creating a bulk's ${STREAM_BULK} document containers + privateLocks in one transaction and deleting them in another, back to back; its server CPU is read over the floor's slices`,
      `least_lock_*: the bare node:http proxy taking the floor's transactions around each bulk (bench/reference-zookeeper-lock.ts: one creating the bulk's document containers + privateLocks before forwarding it, one deleting them after the answer) — what any proxy locking bulks in ZooKeeper costs on this machine, where ZooKeeper, the stand-in, the proxy and the load share the same cores`,
      `*_cpu_ms_per_doc: the serving process's CPU over its own slices / documents it passed; zk_server_cpu_ms_per_doc: the ZooKeeper server's JVM (all its threads) over the proxy's slices / the proxy's documents, *_jit_*: the share of its JIT compiler threads`,
      `single_*: one connection sending ${SINGLE_BULK.toLocaleString('en')}-document bulks with ids; no_ids_*: the ${STREAMS} streams without ids (nothing to lock); stand-in bulk time = ${options.writeMs} ms + ${options.bulkDocMs} ms per document`,
    ],
  };
};
