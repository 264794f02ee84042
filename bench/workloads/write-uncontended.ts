import type { LoadSpec } from '../load.js';
import { measureLockFloor } from '../zookeeper-floor.js';
import { againstReferences, comparison, cycle, measuredAlternating, round, target, versusBare, zookeeperCpuMs, type Workload } from '../workload-result.js';

const INDEX = 'bench-uncontended';
const DOCUMENTS = 100_000;
const CONNECTIONS = 32;
/** Fewer clients than saturation: each write's fixed cost shows where batching cannot hide it. */
const MODERATE_CONNECTIONS = 16;

/** Every write locks a different document: the cost of one uncontended lock per write. */
export const writeUncontended: Workload = async (context) => {
  const { env, options } = context;
  const spec = (baseUrl: string, run: string, connections = CONNECTIONS): LoadSpec => {
    const next = cycle(DOCUMENTS);
    return {
      baseUrl,
      connections,
      durationS: options.durationS,
      method: 'PUT',
      pathFor: () => `/${INDEX}/_doc/${run}-${next()}`,
      body: () => '{"field":"value","n":1}',
    };
  };
  const inProcessLock = { spec: spec(env.inProcessProxyUrl, 'm'), cpuMs: () => env.inProcessProxyCpuMs() };
  const leastLock = { spec: spec(env.lockingReferenceUrl, 'l'), cpuMs: () => env.lockingReferenceCpuMs(), serverCpuMs: zookeeperCpuMs(env) };
  const references = againstReferences(context, spec);
  const { direct, proxy, bare, bareUndici, inProcess, bareLocked, proxyModerate, bareModerate, bareLockedModerate } = await measuredAlternating(context, {
    ...references,
    inProcess: inProcessLock,
    bareLocked: leastLock,
    proxyModerate: { ...references.proxy, spec: spec(env.proxyUrl, 'q', MODERATE_CONNECTIONS) },
    bareModerate: { ...references.bare, spec: spec(env.referenceUrl['node-http'], 'c', MODERATE_CONNECTIONS) },
    bareLockedModerate: { ...leastLock, spec: spec(env.lockingReferenceUrl, 'k', MODERATE_CONNECTIONS) },
  });
  const floor = await measureLockFloor(env.zookeeper);
  const base = { ...comparison(direct.load, proxy.load, proxy.cpuMsPerRequest), ...versusBare(proxy, bare, bareUndici) };
  // The share of the proxy's CPU that no ZooKeeper lock can avoid: the bare proxy's work plus the
  // client side of one create + delete, measured in this run.
  const floorCpu = (base.bare_cpu_ms_per_request ?? 0) + floor.lockPairCpuMs;
  const summary: Record<string, number | null> = {
    ...base,
    zk_lock_create_p50_ms: round(floor.lockCreateP50Ms),
    zk_lock_pair_p50_ms: round(floor.lockPairP50Ms),
    zk_lock_pair_cpu_ms: round(floor.lockPairCpuMs, 4),
    cpu_ratio_vs_bare_plus_zk_floor: round(proxy.cpuMsPerRequest / Math.max(floorCpu, 1e-9)),
    // The lock's other half of the machine: ZooKeeper runs on the same two cores here.
    zk_server_cpu_ms_per_write: Number.isNaN(proxy.serverCpuMsPerRequest) ? null : round(proxy.serverCpuMsPerRequest, 4),
    // The same proxy with the in-process lock: what the edge and the write path cost without
    // ZooKeeper, so the gap to the bare proxy splits into theirs and the ZooKeeper lock's.
    in_process_lock_rps: round(inProcess.load.rps, 1),
    in_process_lock_p50_ms: round(inProcess.load.p50Ms),
    in_process_lock_throughput_ratio_vs_bare: round(inProcess.load.rps / bare.load.rps),
    in_process_lock_cpu_ratio_vs_bare: round(inProcess.cpuMsPerRequest / bare.cpuMsPerRequest),
    zookeeper_lock_added_p50_ms: round(proxy.load.p50Ms - inProcess.load.p50Ms),
    // The bare proxy with the least ZooKeeper lock in the proxy's node layout: where any lock that
    // follows the design's layout stands against the bare proxy on this machine, in this run.
    bare_zk_lock_rps: round(bareLocked.load.rps, 1),
    bare_zk_lock_p50_ms: round(bareLocked.load.p50Ms),
    bare_zk_lock_throughput_ratio_vs_bare: round(bareLocked.load.rps / bare.load.rps),
    bare_zk_lock_cpu_ms_per_request: round(bareLocked.cpuMsPerRequest, 4),
    bare_zk_lock_cpu_ratio_vs_bare: round(bareLocked.cpuMsPerRequest / bare.cpuMsPerRequest),
    bare_zk_lock_zk_server_cpu_ms_per_write: Number.isNaN(bareLocked.serverCpuMsPerRequest) ? null : round(bareLocked.serverCpuMsPerRequest, 4),
    throughput_ratio_vs_bare_zk_lock: round(proxy.load.rps / bareLocked.load.rps),
    moderate_proxy_rps: round(proxyModerate.load.rps, 1),
    moderate_proxy_cpu_ms_per_request: round(proxyModerate.cpuMsPerRequest, 4),
    moderate_bare_cpu_ms_per_request: round(bareModerate.cpuMsPerRequest, 4),
    moderate_cpu_ratio_vs_bare: round(proxyModerate.cpuMsPerRequest / bareModerate.cpuMsPerRequest),
    // Where any lock in the design's layout stands at the same load: the CPU target's floor here.
    moderate_bare_zk_lock_cpu_ms_per_request: round(bareLockedModerate.cpuMsPerRequest, 4),
    moderate_bare_zk_lock_cpu_ratio_vs_bare: round(bareLockedModerate.cpuMsPerRequest / bareModerate.cpuMsPerRequest),
    moderate_cpu_ratio_vs_bare_zk_lock: round(proxyModerate.cpuMsPerRequest / bareLockedModerate.cpuMsPerRequest),
  };
  const ratio = summary.throughput_ratio ?? 0;
  const added = summary.added_p50_ms ?? 0;
  const cpuRatio = summary.cpu_ratio_vs_bare ?? 0;
  const vsBare = summary.throughput_ratio_vs_bare ?? 0;
  const vsLeastLock = summary.throughput_ratio_vs_bare_zk_lock ?? 0;
  const moderateCpuRatio = summary.moderate_cpu_ratio_vs_bare ?? 0;
  return {
    workload: 'write-uncontended',
    summary,
    runs: {
      direct: direct.load,
      proxy: proxy.load,
      bare: bare.load,
      bareUndici: bareUndici.load,
      inProcessLock: inProcess.load,
      bareZooKeeperLock: bareLocked.load,
      proxyModerate: proxyModerate.load,
      bareModerate: bareModerate.load,
      bareZooKeeperLockModerate: bareLockedModerate.load,
    },
    targets: [
      target('uncontended locked write CPU <= 2.5x the bare proxy passing the same write', cpuRatio, cpuRatio <= 2.5),
      target(`uncontended locked write CPU at ${MODERATE_CONNECTIONS} connections <= 2.5x the bare proxy at ${MODERATE_CONNECTIONS}`, moderateCpuRatio, moderateCpuRatio <= 2.5),
      target('write-uncontended throughput >= 0.8x the bare proxy', vsBare, vsBare >= 0.8),
      target('write-uncontended throughput >= 0.95x the bare proxy with the least ZooKeeper lock', vsLeastLock, vsLeastLock >= 0.95),
      target('write-uncontended throughput >= 0.8x direct', ratio, ratio >= 0.8),
      target('write-uncontended added p50 <= 1 ms', added, added <= 1),
    ],
    notes: [
      `PUT /${INDEX}/_doc/{id} over ${DOCUMENTS} ids, ${CONNECTIONS} connections, stand-in write time ${options.writeMs} ms`,
      'zk_lock_*: the floor under any ZooKeeper lock, measured on the same server in this run with the raw client (bench/zookeeper-floor.ts): one transaction creating a document container + privateLock, then its delete, sequential; cpu = the raw client process\'s CPU per pair; cpu_ratio_vs_bare_plus_zk_floor = proxy CPU / (bare proxy CPU + that); zk_server_cpu_ms_per_write = the ZooKeeper server JVM\'s CPU around the proxy\'s slices / the proxy\'s writes',
      'bare_zk_lock_*: the same writes through the bare node:http proxy taking the least ZooKeeper lock a write can have in the proxy\'s node layout (bench/reference-zookeeper-lock.ts: document container + privateLock created in one transaction before forwarding, deleted in one after), in the same alternating slices; throughput_ratio_vs_bare_zk_lock = proxy rps / its rps',
      `moderate_*: the proxy, the bare node:http proxy and the least ZooKeeper lock again with ${MODERATE_CONNECTIONS} connections instead of ${CONNECTIONS}, in the same alternating slices: CPU per write where the proxy is not saturated and batching hides less`,
      'in_process_lock_*: the same proxy (a third process) with proxy.lock.service=in-process, in the same alternating slices: the edge and the write path without ZooKeeper; zookeeper_lock_added_p50_ms = the ZooKeeper proxy\'s p50 minus its',
    ],
  };
};
