import { appendFileSync } from 'node:fs';
import { expect, it, vi } from 'vitest';
import { describeFailure, runSeeds } from './sim-batch.js';
import { TransitionCoverage } from './sim-coverage.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

/** What `npm run sim` runs (scripts/sim.mjs passes the range in the environment). */
it('seeded simulation runs', { timeout: 0 }, async () => {
  const runs = Number(process.env.SIM_RUNS ?? '1000');
  const first = Number(process.env.SIM_SEED ?? '1');
  const traceLines = process.env.SIM_TRACE === '1' ? Number.MAX_SAFE_INTEGER : 60;
  const digestFile = process.env.SIM_DIGEST ?? '';
  const coverage = process.env.SIM_COVERAGE === '1' ? new TransitionCoverage() : null;
  coverage?.start();
  const report = await runSeeds(first, runs, {
    ...(coverage === null ? {} : { coverage }),
    onProgress: (done, failing) => console.log(`${done} runs, ${failing} failing`),
    ...(digestFile === '' ? {} : { onDigest: (seed: number, digest: string) => appendFileSync(digestFile, `${seed} ${digest}\n`) }),
  });
  coverage?.stop();
  if (coverage !== null) console.log(['moves of the document lock (seeds that made each):', ...coverage.report(runs)].join('\n'));
  for (const result of report.failing) console.log(describeFailure(result, traceLines));
  console.log(
    `${report.runs} runs (seeds ${first}..${first + runs - 1}), ${report.failing.length} with violations, ${report.events} events, ` +
      `${report.seconds.toFixed(1)} s, ${(report.runs / report.seconds).toFixed(1)} runs/s (${report.cpuSeconds.toFixed(1)} s of CPU, ${(report.runs / report.cpuSeconds).toFixed(1)} runs per CPU second)`,
  );
  expect(report.failing.map((result) => result.seed)).toEqual([]);
});
