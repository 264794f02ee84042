/**
 * `npm run bench -- [options]` (see bench-options.ts): every workload, straight to the
 * Elasticsearch stand-in and through the proxy in the same run, each component in its own process.
 * Prints Markdown tables and writes the JSON result (default bench/results/latest.json).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fourLetterWord } from '../test/support/zookeeper-server.js';
import { startBenchEnvironment } from './bench-environment.js';
import { BENCH_PATHS, writeBenchDocs } from './docs/bench-docs.js';
import { jvmCpuSince, type JvmCpu } from './jvm-cpu.js';
import { parseBenchOptions, USAGE, type BenchOptions, type WorkloadName } from './bench-options.js';
import { notesList, resultsTable, targetsTable } from './report.js';
import { round, type Workload, type WorkloadResult } from './workload-result.js';
import { authFlood } from './workloads/auth-flood.js';
import { bulk } from './workloads/bulk.js';
import { bulkGzip } from './workloads/bulk-gzip.js';
import { bulkStreams } from './workloads/bulk-streams.js';
import { fencing } from './workloads/fencing.js';
import { fgUnderBg } from './workloads/fg-under-bg.js';
import { lock } from './workloads/lock.js';
import { openLoop } from './workloads/open-loop.js';
import { passthrough } from './workloads/passthrough.js';
import { tls } from './workloads/tls.js';
import { writeHot } from './workloads/write-hot.js';
import { writeUncontended } from './workloads/write-uncontended.js';
import { warmZooKeeper, type ZooKeeperWarmup } from './zookeeper-warmup.js';

const WORKLOAD_RUNNERS: Record<WorkloadName, Workload> = {
  passthrough,
  'write-uncontended': writeUncontended,
  'open-loop': openLoop,
  'write-hot': writeHot,
  'fg-under-bg': fgUnderBg,
  bulk,
  'bulk-gzip': bulkGzip,
  'bulk-streams': bulkStreams,
  lock,
  fencing,
  tls,
  'auth-flood': authFlood,
};

const LOCK_FREE_WORKLOADS = new Set<WorkloadName>(['passthrough', 'tls']);

async function zookeeperVersion(connect: string): Promise<string> {
  const port = Number(connect.split(',')[0]?.split(':')[1]);
  const reply = await fourLetterWord(port, 'srvr');
  return /Zookeeper version: ([^\s,]+)/.exec(reply)?.[1] ?? 'unknown';
}

async function machine(zookeeper: string): Promise<Record<string, string | number>> {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    zookeeper: await zookeeperVersion(zookeeper),
  };
}

/** The ZooKeeper server's CPU over the whole workload (both ways), its JIT threads' share apart. */
function withZooKeeperCpu(result: WorkloadResult, used: JvmCpu | null): WorkloadResult {
  if (used === null) return result;
  return { ...result, summary: { ...result.summary, zk_server_cpu_ms: round(used.totalMs, 0), zk_server_jit_cpu_ms: round(used.compilerMs, 0) } };
}

async function runAll(options: BenchOptions): Promise<void> {
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const env = await startBenchEnvironment(options);
  const results: WorkloadResult[] = [];
  let host: Record<string, string | number> = {};
  let warmup: ZooKeeperWarmup | null = null;
  try {
    host = await machine(env.zookeeper);
    // `--warmup 0` (the smoke test) asks for none; passthrough and tls never lock.
    if (options.warmupS > 0 && options.workloads.some((name) => !LOCK_FREE_WORKLOADS.has(name))) {
      console.error('[bench] warming ZooKeeper up ...');
      warmup = await warmZooKeeper(env);
      console.error(`[bench] ZooKeeper warm-up: ${JSON.stringify(warmup)}`);
    }
    for (const name of options.workloads) {
      const workloadStarted = Date.now();
      console.error(`[bench] ${name} ...`);
      const before = await env.zookeeperCpu();
      const result = await WORKLOAD_RUNNERS[name]({ env, options });
      results.push(withZooKeeperCpu(result, jvmCpuSince(before, await env.zookeeperCpu())));
      console.error(`[bench] ${name} done in ${((Date.now() - workloadStarted) / 1000).toFixed(1)} s`);
    }
  } finally {
    await env.close();
  }
  const report = {
    generatedAt: new Date().toISOString(),
    totalSeconds: Math.round((Date.now() - started) / 1000),
    // Other processes on a shared machine skew every number; the 1-minute load average says whether they did.
    loadAverage1m: { atStart: round(loadAtStart), atEnd: round(loadavg()[0] ?? 0) },
    machine: host,
    options,
    zookeeperWarmup: warmup,
    workloads: Object.fromEntries(results.map((r) => [r.workload, { summary: r.summary, targets: r.targets, notes: r.notes, runs: r.runs }])),
  };
  await mkdir(dirname(options.out), { recursive: true });
  await writeFile(options.out, JSON.stringify(report, (key, value: unknown) => (key === 'latenciesMs' ? undefined : value), 2) + '\n');
  console.log(`\n## Results (${options.durationS} s per run, warm-up ${options.warmupS} s)\n`);
  console.log(resultsTable(results));
  console.log('\n## Targets\n');
  console.log(targetsTable(results));
  console.log('\n## Method notes\n');
  console.log(notesList(results));
  if (warmup !== null) console.log(`\nZooKeeper warm-up before the workloads: ${warmup.rounds} rounds, ${warmup.seconds} s; its JIT threads' CPU in the last round: ${warmup.compilerMsPerS ?? 'not readable'} ms/s`);
  console.log(`\nload average (1 min) at start/end: ${report.loadAverage1m.atStart} / ${report.loadAverage1m.atEnd}`);
  console.log(`machine: ${JSON.stringify(host)}\nwritten: ${options.out} (total ${report.totalSeconds} s)`);
  recordInDocs(options.out);
}

/**
 * A run that wrote the results the docs quote joins history.csv and regenerates docs/benchmarks.md,
 * its charts and the README's headline; a run written elsewhere (`--out`, the smoke test) leaves them.
 */
function recordInDocs(out: string): void {
  if (resolve(out) !== resolve(BENCH_PATHS.latest)) {
    console.log(`docs not regenerated: only a run written to ${BENCH_PATHS.latest} is recorded`);
    return;
  }
  const changed = writeBenchDocs(process.cwd());
  console.log(`recorded in ${BENCH_PATHS.history}; regenerated: ${changed.join(', ') || 'nothing changed'}`);
}

const argv = process.argv.slice(2);
if (argv.includes('--help')) {
  console.log(USAGE);
  process.exit(0);
}
runAll(parseBenchOptions(argv)).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
