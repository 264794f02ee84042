#!/usr/bin/env node
// `npm run sim -- --runs N --seed S [--workers W] [--trace] [--coverage] [--digest FILE]`: runs seeds
// S … S+N-1 of the lock engine's simulation (test/sim/) and prints every violation with its seed and
// trace. The seeds are split into W contiguous ranges (default: the machine's cores), each run by a
// worker process; the report is one, as if one process had run them all. --trace prints a failing
// run's whole trace instead of its last 60 events. --digest appends one line per seed,
// `seed sha1-of-its-trace`, to FILE in seed order: two engine versions compared seed by seed.
// --coverage prints how many seeds made each move of the document lock's transition table (and its
// rare paths).
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { coverageLines, mergeReports, progressOf, splitSeeds } from './sim-workers.mjs';

function usage(message) {
  console.error(`${message}\nusage: npm run sim -- --runs N --seed S [--workers W] [--trace] [--coverage] [--digest FILE]`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1000' },
      seed: { type: 'string', default: '1' },
      workers: { type: 'string', default: String(availableParallelism()) },
      trace: { type: 'boolean', default: false },
      coverage: { type: 'boolean', default: false },
      digest: { type: 'string', default: '' },
    },
  }));
} catch (error) {
  usage(error.message);
}
if (!/^[1-9]\d*$/.test(values.runs)) usage(`--runs must be a positive integer, got "${values.runs}"`);
if (!/^\d+$/.test(values.seed)) usage(`--seed must be a non-negative integer, got "${values.seed}"`);
if (!/^[1-9]\d*$/.test(values.workers)) usage(`--workers must be a positive integer, got "${values.workers}"`);

const root = resolve(import.meta.dirname, '..');
const first = Number(values.seed);
const runs = Number(values.runs);
const ranges = splitSeeds(first, runs, Number(values.workers));
const scratch = mkdtempSync(join(tmpdir(), 'sim-workers-'));
const progress = ranges.map(() => ({ done: 0, failing: 0 }));
const children = new Set();
const OUTPUT_TAIL_LINES = 200;
const print = (line) => process.stdout.write(`${line}\n`);

// Each worker is a process group of its own (vitest and the fork that runs the seeds): a signal to
// this command is passed on to every process of each group, so none is left running the seeds.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // That worker has ended already.
      }
    }
    rmSync(scratch, { recursive: true, force: true });
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

/** Runs one range of seeds in a vitest process of its own; resolves with its report (null if it wrote none) and its output's tail. */
function runWorker(range, index) {
  const reportFile = join(scratch, `report-${index}.json`);
  const digestFile = values.digest === '' ? '' : join(scratch, `digest-${index}`);
  const child = spawn(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', 'test/sim/vitest.sim.config.ts'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      SIM_RUNS: String(range.runs),
      SIM_SEED: String(range.first),
      SIM_TRACE: values.trace ? '1' : '0',
      SIM_COVERAGE: values.coverage ? '1' : '0',
      SIM_DIGEST: digestFile,
      SIM_REPORT: reportFile,
      NO_COLOR: '1',
      FORCE_COLOR: '0',
    },
  });
  children.add(child);
  const tail = [];
  const keep = (line) => {
    tail.push(line);
    if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
  };
  createInterface({ input: child.stderr }).on('line', keep);
  createInterface({ input: child.stdout }).on('line', (line) => {
    keep(line);
    const step = progressOf(line);
    if (step === null) return;
    progress[index] = step;
    const done = progress.reduce((sum, worker) => sum + worker.done, 0);
    const failing = progress.reduce((sum, worker) => sum + worker.failing, 0);
    print(`${done} of ${runs} runs, ${failing} failing`);
  });
  return new Promise((resolveWorker) => {
    child.on('close', (code, signal) => {
      children.delete(child);
      const report = code === 0 && existsSync(reportFile) ? JSON.parse(readFileSync(reportFile, 'utf8')) : null;
      resolveWorker({ range, index, code, signal, tail, report, digestFile });
    });
  });
}

const started = performance.now();
const workers = await Promise.all(ranges.map(runWorker));
const seconds = (performance.now() - started) / 1_000;

let broken = false;
for (const worker of workers) {
  if (values.digest !== '' && existsSync(worker.digestFile)) appendFileSync(resolve(values.digest), readFileSync(worker.digestFile));
  if (worker.report !== null) continue;
  broken = true;
  const last = worker.range.first + worker.range.runs - 1;
  print(
    [`worker ${worker.index + 1} (seeds ${worker.range.first}..${last}) ended without a report (exit code ${worker.code ?? worker.signal}); the end of its output:`, ...worker.tail.map((line) => `  ${line}`)].join('\n'),
  );
}
rmSync(scratch, { recursive: true, force: true });

const reports = workers.flatMap((worker) => (worker.report === null ? [] : [worker.report]));
const merged = mergeReports(reports);
if (merged.coverage !== null) print(['moves of the document lock (seeds that made each):', ...coverageLines(merged.coverage, merged.runs)].join('\n'));
for (const failure of merged.failing) print(failure.text);
const perSecond = (count, time) => (time > 0 ? (count / time).toFixed(1) : '-');
// Each worker's own time (its runs alone), then the whole command's (worker start-up included).
for (const report of reports) {
  print(`  seeds ${report.first}..${report.first + report.runs - 1}: ${report.runs} runs, ${report.seconds.toFixed(1)} s, ${perSecond(report.runs, report.seconds)} runs/s`);
}
print(
  `${merged.runs} runs (seeds ${first}..${first + runs - 1}) in ${ranges.length} worker${ranges.length === 1 ? '' : 's'}, ${merged.failing.length} with violations, ${merged.events} events, ` +
    `${seconds.toFixed(1)} s, ${perSecond(merged.runs, seconds)} runs/s (${merged.cpuSeconds.toFixed(1)} s of CPU, ${perSecond(merged.runs, merged.cpuSeconds)} runs per CPU second)` +
    `${broken ? `; ${runs - merged.runs} seeds not run to the end (a worker failed, above)` : ''}`,
);
// Not process.exit: on a pipe (sim-breaks.mjs, mutate.mjs read this output) it cuts the report short.
process.exitCode = broken || merged.failing.length > 0 ? 1 : 0;
