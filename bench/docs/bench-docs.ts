import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { renderCharts } from './bench-charts.js';
import { withBlocks } from './bench-doc-blocks.js';
import { formatHistory, historyRowOf, keptRuns, parseHistory, withRun } from './bench-history.js';
import { parseBenchReport } from './bench-report.js';

/** Where the generated benchmark documentation lives, relative to the repository root. */
export const BENCH_PATHS = {
  latest: 'bench/results/latest.json',
  history: 'bench/results/history.csv',
  doc: 'docs/benchmarks.md',
  readme: 'README.md',
  /** Relative to docs/. */
  chartDir: 'benchmarks',
} as const;

/**
 * Every file the latest run's report determines, with the content it should have: history.csv with
 * that run's row, docs/benchmarks.md and the README with their generated blocks, and the charts.
 * Reads only; `commitOf` names the code of a run history.csv does not have yet.
 */
export function benchDocOutputs(root: string, commitOf: () => string = currentCommit): Map<string, string> {
  const report = parseBenchReport(readFileSync(join(root, BENCH_PATHS.latest), 'utf8'), BENCH_PATHS.latest);
  const historyPath = join(root, BENCH_PATHS.history);
  const rows = existsSync(historyPath) ? parseHistory(readFileSync(historyPath, 'utf8')) : [];
  const known = rows.some((row) => row.runAt === report.generatedAt);
  const history = known ? rows : withRun(rows, historyRowOf(report, commitOf()));
  const kept = keptRuns(history);
  const charts = renderCharts(report, kept);
  const outputs = new Map<string, string>([[BENCH_PATHS.history, formatHistory(history)]]);
  for (const document of [BENCH_PATHS.doc, BENCH_PATHS.readme]) {
    const current = readFileSync(join(root, document), 'utf8');
    const updated = withBlocks(current, { report, kept, charts, chartDir: document === BENCH_PATHS.doc ? BENCH_PATHS.chartDir : `docs/${BENCH_PATHS.chartDir}` });
    if (updated === null) throw new Error(`${document} has no bench block markers`);
    outputs.set(document, updated);
  }
  for (const chart of charts) outputs.set(`docs/${BENCH_PATHS.chartDir}/${chart.file}`, chart.svg);
  return outputs;
}

/** Writes what `benchDocOutputs` computed; returns the files that changed. */
export function writeBenchDocs(root: string): string[] {
  const changed: string[] = [];
  for (const [path, content] of benchDocOutputs(root)) {
    const target = join(root, path);
    if (existsSync(target) && readFileSync(target, 'utf8') === content) continue;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    changed.push(path);
  }
  return changed;
}

function currentCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // Not a git checkout (a tarball): the row is still worth keeping without its commit.
    return '';
  }
}
