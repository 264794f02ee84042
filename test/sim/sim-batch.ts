import { type RunResult, simulate } from './sim-run.js';

export interface BatchReport {
  readonly runs: number;
  readonly failing: readonly RunResult[];
  readonly events: number;
  readonly seconds: number;
}

/**
 * Runs seeds `first` … `first + runs - 1`. A failing seed is run again with its trace on (the
 * same run, event for event), so its report carries the events that led to the violation.
 */
export async function runSeeds(first: number, runs: number, onProgress?: (done: number, failing: number) => void): Promise<BatchReport> {
  const started = performance.now();
  const failing: RunResult[] = [];
  let events = 0;
  for (let seed = first; seed < first + runs; seed++) {
    const result = await simulate({ seed });
    events += result.events;
    if (result.violations.length > 0) failing.push(await simulate({ seed, trace: true }));
    const done = seed - first + 1;
    if (done % 1_000 === 0) onProgress?.(done, failing.length);
  }
  return { runs, failing, events, seconds: (performance.now() - started) / 1_000 };
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
