import { describe, expect, it, vi } from 'vitest';
import { describeFailure, runSeeds, traceDigest } from './sim-batch.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

/** Seeded runs in every `npm test`; `npm run sim -- --runs N --seed S` runs any other range. */
const BUDGET_RUNS = 2_000;
const FIRST_SEED = 1;

describe('lock engine under seeded simulation (docs/simulation.md)', () => {
  it(`keeps every invariant over ${BUDGET_RUNS} seeded runs`, { timeout: 600_000 }, async () => {
    const report = await runSeeds(FIRST_SEED, BUDGET_RUNS);
    console.log(`simulation: ${report.runs} runs, ${report.events} events, ${report.seconds.toFixed(1)} s, ${(report.runs / report.seconds).toFixed(1)} runs/s`);
    const failures = report.failing.map((result) => describeFailure(result, 60));
    expect(failures, failures.join('\n\n')).toEqual([]);
  });
});

describe('simulation replay', () => {
  it('gives one run per seed, event for event', async () => {
    const { simulate } = await import('./sim-run.js');
    for (const seed of [7, 1234]) {
      const first = await simulate({ seed, trace: true });
      const again = await simulate({ seed, trace: true });
      expect(first.trace.length).toBeGreaterThan(50);
      expect(again.trace).toEqual(first.trace);
    }
  });

  it('digests each seed\'s whole trace: the same for the same run, different for another', async () => {
    const { simulate } = await import('./sim-run.js');
    const digests: [number, string][] = [];
    await runSeeds(7, 2, { onDigest: (seed, digest) => digests.push([seed, digest]) });
    const seven = await simulate({ seed: 7, trace: true });
    expect(digests.map(([seed]) => seed)).toEqual([7, 8]);
    expect(digests[0]?.[1]).toBe(traceDigest(seven.trace));
    expect(digests[0]?.[1]).toMatch(/^[0-9a-f]{40}$/);
    expect(digests[1]?.[1]).not.toBe(digests[0]?.[1]);
    expect(traceDigest([...seven.trace.slice(0, -1), `${seven.trace.at(-1) ?? ''} `])).not.toBe(digests[0]?.[1]);
  });
});
