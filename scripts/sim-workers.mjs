// The parts of `npm run sim` (scripts/sim.mjs) that split a range of seeds across worker processes
// and merge what the workers report into one report, as one process would have printed it.

/**
 * Contiguous ranges of seeds, one per worker, as even as can be: seeds are independent, and one
 * range per worker keeps each worker's digest lines in seed order.
 * @param {number} first
 * @param {number} runs
 * @param {number} workers
 * @returns {{ first: number, runs: number }[]}
 */
export function splitSeeds(first, runs, workers) {
  const count = Math.max(1, Math.min(workers, runs));
  const ranges = [];
  for (let index = 0; index < count; index++) {
    const start = Math.floor((index * runs) / count);
    const end = Math.floor(((index + 1) * runs) / count);
    ranges.push({ first: first + start, runs: end - start });
  }
  return ranges;
}

/**
 * One report of several workers' (each one's JSON, written by test/sim/sim-command.sim.ts):
 * runs, events and CPU time summed, failing seeds in seed order, coverage counts summed per move.
 * @param {readonly { runs: number, events: number, cpuSeconds: number, failing: { seed: number, text: string }[], coverage: { move: string, seeds: number }[] | null }[]} reports
 */
export function mergeReports(reports) {
  const coverage = new Map();
  let hasCoverage = false;
  for (const report of reports) {
    if (report.coverage === null) continue;
    hasCoverage = true;
    for (const { move, seeds } of report.coverage) coverage.set(move, (coverage.get(move) ?? 0) + seeds);
  }
  return {
    runs: reports.reduce((sum, report) => sum + report.runs, 0),
    events: reports.reduce((sum, report) => sum + report.events, 0),
    cpuSeconds: reports.reduce((sum, report) => sum + report.cpuSeconds, 0),
    failing: reports.flatMap((report) => report.failing).sort((a, b) => a.seed - b.seed),
    coverage: hasCoverage ? [...coverage].map(([move, seeds]) => ({ move, seeds })) : null,
  };
}

/**
 * One line per move of the document lock's transition table (and rare path): the seeds that made
 * it; moves no seed made are marked.
 * @param {readonly { move: string, seeds: number }[]} coverage
 * @param {number} runs
 * @returns {string[]}
 */
export function coverageLines(coverage, runs) {
  return coverage.map(({ move, seeds }) => `${seeds === 0 ? 'NEVER' : '     '} ${String(seeds).padStart(6)} of ${runs}  ${move}`);
}

/**
 * A worker's progress line (`N runs, F failing`), read from its output; null for any other line.
 * @param {string} line
 * @returns {{ done: number, failing: number } | null}
 */
export function progressOf(line) {
  // eslint-disable-next-line no-control-regex -- the worker's output may carry colour codes
  const match = /^(\d+) runs, (\d+) failing$/.exec(line.replace(/\x1b\[[0-9;]*m/g, '').trim());
  return match === null ? null : { done: Number(match[1]), failing: Number(match[2]) };
}
