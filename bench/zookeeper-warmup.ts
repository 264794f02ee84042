import type { BenchEnvironment } from './bench-environment.js';
import { jvmCpuSince } from './jvm-cpu.js';
import { runLoad, type LoadSpec } from './load.js';
import { randomBelow, round } from './workload-result.js';
import { bulkBodies } from './workloads/bulk.js';

/** What the warm-up did; `compilerMsPerS` is the JIT threads' CPU per second in its last round. */
export interface ZooKeeperWarmup {
  readonly rounds: number;
  readonly seconds: number;
  readonly compilerMsPerS: number | null;
}

const ROUND_S = 3;
const MIN_ROUNDS = 2;
/** Two minutes at most: a JVM that never goes quiet is reported, not waited for. */
const MAX_ROUNDS = 40;
/** The JIT threads' CPU per second below which the server counts as warm: 3% of one core. */
const QUIET_COMPILER_MS_PER_S = 30;
const INDEX = 'bench-warmup';
const HOT_DOCUMENTS = 8;

/** Every kind of ZooKeeper work the proxy does: batch transactions, fast paths, queues and hand-overs. */
function specsFor(baseUrl: string): LoadSpec[] {
  const common = { baseUrl, durationS: ROUND_S };
  return [
    { ...common, connections: 2, method: 'POST', pathFor: () => '/_bulk', body: bulkBodies(INDEX, 10_000), headers: { 'content-type': 'application/x-ndjson', 'X-Lock-Type': 'background' } },
    { ...common, connections: 4, method: 'PUT', pathFor: () => `/${INDEX}/_doc/hot-${randomBelow(HOT_DOCUMENTS)}`, body: () => '{"n":1}', headers: { 'X-Lock-Type': 'foreground' } },
    { ...common, connections: 4, method: 'PUT', pathFor: () => `/${INDEX}/_doc/hot-${randomBelow(HOT_DOCUMENTS)}`, body: () => '{"n":2}', headers: { 'X-Lock-Type': 'background' } },
    { ...common, connections: 4, method: 'PUT', pathFor: () => `/${INDEX}/_doc/cold-${randomBelow(1_000_000)}`, body: () => '{"n":3}' },
  ];
}

/**
 * Load through both proxies, in rounds, until the ZooKeeper server's JIT compiler threads go
 * quiet. A deployed ZooKeeper compiled its request path long ago; the JVM the bench starts
 * compiles it during the first workloads that lock, on the same two cores as the proxy and the
 * stand-in (in a run of the bulk workload alone, its compiler threads took 4.0 of the server's
 * 8.4 CPU seconds over 8 s of the measured proxy run). Without a pid to read (`--zk`), two rounds.
 */
export async function warmZooKeeper(env: BenchEnvironment): Promise<ZooKeeperWarmup> {
  const started = Date.now();
  let compilerMsPerS: number | null = null;
  let rounds = 0;
  while (rounds < MAX_ROUNDS) {
    compilerMsPerS = await oneRound(env);
    rounds++;
    console.error(`[bench] ZooKeeper warm-up round ${rounds}: its JIT threads ${compilerMsPerS === null ? 'not readable' : `${Math.round(compilerMsPerS)} ms/s`}`);
    if (rounds >= MIN_ROUNDS && (compilerMsPerS === null || compilerMsPerS < QUIET_COMPILER_MS_PER_S)) break;
  }
  return { rounds, seconds: round((Date.now() - started) / 1000, 1), compilerMsPerS: compilerMsPerS === null ? null : round(compilerMsPerS, 1) };
}

/** One round of load; the JIT threads' CPU per second of it (null when not readable). */
async function oneRound(env: BenchEnvironment): Promise<number | null> {
  const before = await env.zookeeperCpu();
  const roundStarted = Date.now();
  await Promise.all(env.proxyUrls.flatMap(specsFor).map((spec) => runLoad(spec)));
  const used = jvmCpuSince(before, await env.zookeeperCpu());
  return used === null ? null : used.compilerMs / ((Date.now() - roundStarted) / 1000);
}
