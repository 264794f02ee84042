import { createHash } from 'node:crypto';
import { type RunResult, simulate } from './sim-run.js';
import type { TransitionCoverage } from './sim-coverage.js';

export interface BatchReport {
  readonly runs: number;
  readonly failing: readonly RunResult[];
  readonly events: number;
  readonly seconds: number;
  /** CPU time of this process over the batch (user and system): a measure that other work on the machine disturbs less. */
  readonly cpuSeconds: number;
}

export interface BatchOptions {
  readonly onProgress?: (done: number, failing: number) => void;
  /**
   * Called with each seed's trace digest; the runs then keep their trace. Two versions of the
   * engine that give the same digests over a range of seeds made the same requests, in the same
   * order, with the same outcomes: the check that a restructuring changed no behaviour.
   */
  readonly onDigest?: (seed: number, digest: string) => void;
  /** Counts the moves of the document lock's transition table each seed makes. */
  readonly coverage?: TransitionCoverage;
}

/** A run's whole trace as one SHA-1 (hex). */
export function traceDigest(trace: readonly string[]): string {
  return createHash('sha1').update(trace.join('\n')).digest('hex');
}

/**
 * Runs seeds `first` … `first + runs - 1`. A failing seed is run again with its trace on (the
 * same run, event for event), so its report carries the events that led to the violation.
 */
export async function runSeeds(first: number, runs: number, options: BatchOptions = {}): Promise<BatchReport> {
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const failing: RunResult[] = [];
  const digesting = options.onDigest !== undefined;
  let events = 0;
  for (let seed = first; seed < first + runs; seed++) {
    const result = await simulate({ seed, trace: digesting });
    options.coverage?.seedDone();
    events += result.events;
    options.onDigest?.(seed, traceDigest(result.trace));
    if (result.violations.length > 0) {
      failing.push(digesting ? result : await simulate({ seed, trace: true }));
      options.coverage?.discard();
    }
    const done = seed - first + 1;
    if (done % 1_000 === 0) options.onProgress?.(done, failing.length);
  }
  const cpu = process.cpuUsage(cpuStarted);
  return { runs, failing, events, seconds: (performance.now() - started) / 1_000, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/** A failing run as the test and the command print it: seed, set-up, violations, the trace's tail. */
export function describeFailure(result: RunResult, traceLines: number): string {
  return [
    `seed ${result.seed} (${result.summary}):`,
    ...result.violations.map((violation) => `  ${violation}`),
    `  trace (last ${Math.min(traceLines, result.trace.length)} of ${result.trace.length} events; replay: npm run sim -- --runs 1 --seed ${result.seed} --trace):`,
    ...result.trace.slice(-traceLines).map((line) => `    ${line}`),
  ].join('\n');
}
