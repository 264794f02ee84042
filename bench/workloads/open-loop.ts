import { numberField, spawnBenchChild } from '../child-process.js';
import { runLoad, type LoadResult, type LoadSpec } from '../load.js';
import { measureLockFloor, type ZooKeeperFloor } from '../zookeeper-floor.js';
import { addedLatency, againstReferences, measuredAlternating, round, target, type Workload, type WorkloadContext } from '../workload-result.js';

const RATE_PER_S = 200;
/** Unused by a paced load (bench/paced-load.ts opens what it needs); kept for the spec's shape. */
const CONNECTIONS = 16;
const WRITE_INDEX = 'bench-open-loop';
const SEARCH_INDEX = 'bench-search';

/**
 * Far from saturation: a fixed rate of writes (each a new document: one uncontended lock) and,
 * separately, of searches, straight to the stand-in and through the proxy. What the proxy adds to
 * a request's latency when the machine is not busy, at p50 and p99.
 */
export const openLoop: Workload = async (context) => {
  const { env, options } = context;
  let n = 0;
  const writes = (baseUrl: string): LoadSpec => ({
    baseUrl,
    connections: CONNECTIONS,
    durationS: options.durationS,
    overallRate: RATE_PER_S,
    method: 'PUT',
    pathFor: () => `/${WRITE_INDEX}/_doc/o${n++}`,
    body: () => '{"field":"value"}',
  });
  const searches = (baseUrl: string): LoadSpec => ({
    baseUrl,
    connections: CONNECTIONS,
    durationS: options.durationS,
    overallRate: RATE_PER_S,
    method: 'POST',
    pathFor: () => `/${SEARCH_INDEX}/_search`,
    body: () => '{"query":{"match_all":{}},"size":10}',
  });
  // The undici reference is left out: the hop is the bare node:http proxy's, as in the other workloads.
  const hop = (spec: (baseUrl: string) => LoadSpec) => {
    const { direct, proxy, bare } = againstReferences(context, spec);
    return { direct, proxy, bare };
  };
  // Writes also through the same proxy on the in-process lock (the edge's share of the added
  // latency), and through the bare proxy taking the least ZooKeeper lock a write can have (what
  // any ZooKeeper-locking proxy adds on this machine).
  const inProcess = { spec: writes(env.inProcessProxyUrl), cpuMs: () => env.inProcessProxyCpuMs() };
  const bareLocked = { spec: writes(env.lockingReferenceUrl), cpuMs: () => env.lockingReferenceCpuMs() };
  const written = await measuredAlternating(context, { ...hop(writes), inProcess, bareLocked });
  const searched = await measuredAlternating(context, hop(searches));
  // A new document's lock is one ZooKeeper commit before the write may go: its latency, measured
  // on the same server in the same run at the same pace, is in every locked write's added latency.
  const floor = await measureLockFloor(env.zookeeper, { ratePerS: RATE_PER_S });
  const floorUnderBare = await floorDuringWrites(context, writes(env.referenceUrl['node-http']));
  const floorUnderProxy = await floorDuringWrites(context, writes(env.proxyUrl));
  const run = {
    writeDirect: written.direct.load,
    writeProxy: written.proxy.load,
    writeBare: written.bare.load,
    writeInProcessLock: written.inProcess.load,
    writeBareZooKeeperLock: written.bareLocked.load,
  };
  const searchRun = { searchDirect: searched.direct.load, searchProxy: searched.proxy.load, searchBare: searched.bare.load };
  const added = (proxy: LoadResult, direct: LoadResult) => ({ p50: proxy.p50Ms - direct.p50Ms, p99: proxy.p99Ms - direct.p99Ms });
  const write = added(run.writeProxy, run.writeDirect);
  const search = added(searchRun.searchProxy, searchRun.searchDirect);
  // The hop alone: what a bare pipe proxy adds on this machine in the same run.
  const writeHop = added(run.writeBare, run.writeDirect);
  const writeEdge = added(run.writeInProcessLock, run.writeDirect);
  const writeLockFloor = added(run.writeBareZooKeeperLock, run.writeDirect);
  const searchHop = added(searchRun.searchBare, searchRun.searchDirect);
  return {
    workload: 'open-loop',
    summary: {
      rate_per_s: RATE_PER_S,
      ...addedLatency(run.writeDirect, run.writeProxy, 'write_'),
      zk_lock_create_p50_ms: round(floor.lockCreateP50Ms),
      zk_lock_create_p99_ms: round(floor.lockCreateP99Ms),
      write_added_p50_beyond_zk_ms: round(write.p50 - floor.lockCreateP50Ms),
      zk_lock_create_under_bare_load_p50_ms: round(floorUnderBare.lockCreateP50Ms),
      zk_lock_create_under_bare_load_p99_ms: round(floorUnderBare.lockCreateP99Ms),
      zk_lock_create_under_proxy_load_p50_ms: round(floorUnderProxy.lockCreateP50Ms),
      zk_lock_create_under_proxy_load_p99_ms: round(floorUnderProxy.lockCreateP99Ms),
      in_process_lock_write_added_p50_ms: round(writeEdge.p50),
      in_process_lock_write_added_p99_ms: round(writeEdge.p99),
      write_added_p99_beyond_zk_under_load_ms: round(write.p99 - floorUnderProxy.lockCreateP99Ms),
      bare_zk_lock_write_added_p50_ms: round(writeLockFloor.p50),
      bare_zk_lock_write_added_p99_ms: round(writeLockFloor.p99),
      write_added_p50_beyond_bare_zk_lock_ms: round(write.p50 - writeLockFloor.p50),
      write_added_p99_beyond_bare_zk_lock_ms: round(write.p99 - writeLockFloor.p99),
      bare_zk_lock_write_cpu_ms_per_request: round(written.bareLocked.cpuMsPerRequest, 4),
      write_cpu_ratio_vs_bare_zk_lock: round(written.proxy.cpuMsPerRequest / written.bareLocked.cpuMsPerRequest),
      ...addedLatency(searchRun.searchDirect, searchRun.searchProxy, 'search_'),
      bare_write_added_p50_ms: round(writeHop.p50),
      bare_write_added_p99_ms: round(writeHop.p99),
      bare_search_added_p50_ms: round(searchHop.p50),
      bare_search_added_p99_ms: round(searchHop.p99),
      // At a fixed low rate every request wakes the processes up on its own: on a virtual machine
      // that costs far more CPU per request than a closed loop at saturation, bare proxy included.
      proxy_write_cpu_ms_per_request: round(written.proxy.cpuMsPerRequest, 4),
      bare_write_cpu_ms_per_request: round(written.bare.cpuMsPerRequest, 4),
      write_cpu_ratio_vs_bare: round(written.proxy.cpuMsPerRequest / written.bare.cpuMsPerRequest),
      proxy_search_cpu_ms_per_request: round(searched.proxy.cpuMsPerRequest, 4),
      bare_search_cpu_ms_per_request: round(searched.bare.cpuMsPerRequest, 4),
      search_cpu_ratio_vs_bare: round(searched.proxy.cpuMsPerRequest / searched.bare.cpuMsPerRequest),
      proxy_non2xx: run.writeProxy.non2xx + run.writeProxy.errors + searchRun.searchProxy.non2xx + searchRun.searchProxy.errors,
    },
    runs: { ...run, ...searchRun },
    targets: [
      target('open loop: search added p50 <= 0.3 ms', search.p50, search.p50 <= 0.3),
      target('open loop: search added p99 <= 2 ms', search.p99, search.p99 <= 2),
      target('open loop: write added p50 <= 1 ms', write.p50, write.p50 <= 1),
      target('open loop: write added p99 <= 3 ms', write.p99, write.p99 <= 3),
      // Against what any ZooKeeper-locking proxy adds here, in the same slices: the proxy's own share.
      target('open loop: write added p50 <= the least ZooKeeper lock\'s + 0.3 ms', write.p50 - writeLockFloor.p50, write.p50 - writeLockFloor.p50 <= 0.3),
      target('open loop: write added p99 <= the least ZooKeeper lock\'s + 1 ms', write.p99 - writeLockFloor.p99, write.p99 - writeLockFloor.p99 <= 1),
      // The same row without ZooKeeper: the edge and the write path. What a ZooKeeper lock leaves
      // of the 3 ms on this machine is what the bare proxy with the least one adds (bare_zk_lock_*).
      target('open loop: write added p99 <= 3 ms on the in-process lock (edge and write path, no ZooKeeper)', writeEdge.p99, writeEdge.p99 <= 3),
    ],
    notes: [
      `${RATE_PER_S} requests/s at an even pace (bench/paced-load.ts: one request every ${1000 / RATE_PER_S} ms, whatever the answers do); writes PUT a new id each, stand-in write time ${options.writeMs} ms; ` +
        'bare_*_added: the same load through the bare node:http pipe proxy (the hop alone); ' +
        'zk_lock_create_*: the raw client taking one new document\'s lock (container + privateLock, one transaction) at the same pace, on the same server (bench/zookeeper-floor.ts): alone after the slices, and *_under_bare_load / *_under_proxy_load while the same 200 writes/s go through the bare proxy / the proxy (the floor in its own process; that load is not measured): ZooKeeper shares the two cores, so any hop\'s load lengthens its commit\'s tail; ' +
        'in_process_lock_write_added_*: the same writes through the same proxy on the in-process lock (a third process, in the same alternating slices): the edge and the write path without ZooKeeper; ' +
        'bare_zk_lock_write_*: the same writes through the bare node:http proxy taking the least ZooKeeper lock a write can have, the proxy\'s node layout with the raw client (container + privateLock in one transaction before forwarding, one transaction deleting them after, not awaited; bench/reference-zookeeper-lock.ts), in the same alternating slices: what any ZooKeeper-locking proxy adds here',
    ],
  };
};

/**
 * ZooKeeper's commit while a hop (the proxy, or the bare proxy) carries this workload's writes:
 * the machine as busy as in that hop's slices (two cores shared by the load generator, the hop,
 * the stand-in and ZooKeeper), which a floor measured alone does not see. The floor runs in its
 * own process so that neither event loop delays the other; its warm-up and measured pairs fit
 * inside the load.
 */
async function floorDuringWrites(context: WorkloadContext, hopWrites: LoadSpec): Promise<ZooKeeperFloor> {
  const pairs = Math.max(50, Math.round(RATE_PER_S * Math.max(0.5, context.options.durationS - 2)));
  const warmupPairs = Math.min(RATE_PER_S, pairs);
  const loadS = (warmupPairs + pairs) / RATE_PER_S + 1;
  const load = runLoad({ ...hopWrites, durationS: loadS });
  const probe = await spawnBenchChild(
    './zookeeper-floor-process.ts',
    { zookeeper: context.env.zookeeper, ratePerS: RATE_PER_S, warmupPairs, pairs },
    (line): ZooKeeperFloor => ({
      lockCreateP50Ms: numberField(line, 'lockCreateP50Ms'),
      lockCreateP99Ms: numberField(line, 'lockCreateP99Ms'),
      lockPairP50Ms: numberField(line, 'lockPairP50Ms'),
      lockPairCpuMs: numberField(line, 'lockPairCpuMs'),
    }),
  );
  await Promise.all([load, probe.stop()]);
  return probe.info;
}
