import { appendFileSync, writeFileSync } from 'node:fs';
import { it, vi } from 'vitest';
import { describeFailure, runSeeds } from './sim-batch.js';
import { TransitionCoverage } from './sim-coverage.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

/**
 * One worker of `npm run sim`: scripts/sim.mjs passes its range of seeds in the environment and
 * merges the workers' reports (SIM_REPORT, JSON) into one: failing seeds with their traces, the
 * coverage counts, events and times. Progress goes to stdout as `N runs, F failing`.
 */
it('seeded simulation runs', { timeout: 0 }, async () => {
  const runs = Number(process.env.SIM_RUNS ?? '1000');
  const first = Number(process.env.SIM_SEED ?? '1');
  const traceLines = process.env.SIM_TRACE === '1' ? Number.MAX_SAFE_INTEGER : 60;
  const digestFile = process.env.SIM_DIGEST ?? '';
  const reportFile = process.env.SIM_REPORT ?? '';
  if (reportFile === '') throw new Error('run through `npm run sim` (scripts/sim.mjs), which names the report file in SIM_REPORT');
  const coverage = process.env.SIM_COVERAGE === '1' ? new TransitionCoverage() : null;
  coverage?.start();
  const report = await runSeeds(first, runs, {
    ...(coverage === null ? {} : { coverage }),
    onProgress: (done, failing) => console.log(`${done} runs, ${failing} failing`),
    ...(digestFile === '' ? {} : { onDigest: (seed: number, digest: string) => appendFileSync(digestFile, `${seed} ${digest}\n`) }),
  });
  coverage?.stop();
  writeFileSync(
    reportFile,
    JSON.stringify({
      first,
      runs: report.runs,
      events: report.events,
      seconds: report.seconds,
      cpuSeconds: report.cpuSeconds,
      failing: report.failing.map((result) => ({ seed: result.seed, text: describeFailure(result, traceLines) })),
      coverage: coverage?.counts() ?? null,
    }),
  );
});
