import { describe, expect, it } from 'vitest';
import { coverageLines, mergeReports, progressOf, splitSeeds } from '../../../scripts/sim-workers.mjs';

/* `npm run sim --workers`: the seeds split across workers and their reports merged into one. */

describe('splitSeeds', () => {
  it('covers every seed once, in order, in contiguous ranges as even as can be', () => {
    const ranges = splitSeeds(5, 11, 3);
    expect(ranges).toEqual([
      { first: 5, runs: 3 },
      { first: 8, runs: 4 },
      { first: 12, runs: 4 },
    ]);
    const seeds = ranges.flatMap((range) => Array.from({ length: range.runs }, (_, i) => range.first + i));
    expect(seeds).toEqual(Array.from({ length: 11 }, (_, i) => 5 + i));
  });

  it('never gives a worker no seeds', () => {
    expect(splitSeeds(1, 2, 8)).toEqual([
      { first: 1, runs: 1 },
      { first: 2, runs: 1 },
    ]);
    expect(splitSeeds(1, 1_000_000, 1)).toEqual([{ first: 1, runs: 1_000_000 }]);
  });
});

describe('mergeReports', () => {
  const coverage = (a: number, b: number) => [
    { move: 'fastPath -grant-> held', seeds: a },
    { move: 'placeNeedsFreshQueue', seeds: b },
  ];

  it('sums runs, events, CPU and coverage, and lists the failing seeds in seed order', () => {
    const merged = mergeReports([
      { runs: 3, events: 30, cpuSeconds: 1.5, failing: [{ seed: 9, text: 'seed 9' }, { seed: 7, text: 'seed 7' }], coverage: coverage(3, 0) },
      { runs: 2, events: 20, cpuSeconds: 1, failing: [{ seed: 2, text: 'seed 2' }], coverage: coverage(1, 1) },
    ]);
    expect(merged).toEqual({ runs: 5, events: 50, cpuSeconds: 2.5, failing: [{ seed: 2, text: 'seed 2' }, { seed: 7, text: 'seed 7' }, { seed: 9, text: 'seed 9' }], coverage: coverage(4, 1) });
  });

  it('has no coverage when no worker counted it', () => {
    expect(mergeReports([{ runs: 1, events: 1, cpuSeconds: 0, failing: [], coverage: null }]).coverage).toBeNull();
  });
});

describe('coverageLines', () => {
  it('gives each move its seeds and marks the moves no seed made', () => {
    expect(coverageLines([{ move: 'fastPath -grant-> held', seeds: 2000 }, { move: 'released -grant-> held', seeds: 0 }], 2000)).toEqual([
      '        2000 of 2000  fastPath -grant-> held',
      'NEVER      0 of 2000  released -grant-> held',
    ]);
  });
});

describe('progressOf', () => {
  it("reads a worker's progress line, colour codes or not, and nothing else", () => {
    expect(progressOf('1000 runs, 2 failing')).toEqual({ done: 1000, failing: 2 });
    expect(progressOf('\u001b[22m\u001b[39m3000 runs, 0 failing')).toEqual({ done: 3000, failing: 0 });
    expect(progressOf('2000 runs (seeds 1..2000), 0 with violations, 1209423 events')).toBeNull();
    expect(progressOf('stdout | test/sim/sim-command.sim.ts > seeded simulation runs')).toBeNull();
  });
});
