import { BENCH_FIGURES, figuresOf } from './bench-figures.js';
import type { BenchReport } from './bench-report.js';

/**
 * `bench/results/history.csv`: one row per `npm run bench` run, its figures by id. The documentation
 * quotes the median and range of the last `RUNS_KEPT` rows: on a shared machine one run's ratio moves
 * by a tenth from one run to the next, and a single run says little about the next.
 */
export const RUNS_KEPT = 5;

const RUN_COLUMNS = ['run_at', 'commit', 'duration_s', 'load_start', 'load_end'] as const;

export interface HistoryRow {
  readonly runAt: string;
  readonly commit: string;
  readonly figures: Readonly<Record<string, number | null>>;
  /** The cells as read, by column name (kept when the file is rewritten with more columns). */
  readonly cells: Readonly<Record<string, string>>;
}

export function historyRowOf(report: BenchReport, commit: string): HistoryRow {
  const figures = figuresOf(report);
  const cells: Record<string, string> = {
    run_at: report.generatedAt,
    commit,
    duration_s: String(report.options.durationS),
    load_start: String(report.loadAverage1m.atStart),
    load_end: String(report.loadAverage1m.atEnd),
  };
  for (const [id, value] of Object.entries(figures)) cells[id] = value === null ? '' : String(Number(value.toFixed(4)));
  return { runAt: report.generatedAt, commit, figures: numbersOf(cells), cells };
}

export function parseHistory(text: string): HistoryRow[] {
  const [headerLine, ...lines] = text.split('\n').filter((line) => line.trim() !== '');
  if (headerLine === undefined) return [];
  const header = headerLine.split(',');
  return lines.map((line) => {
    const values = line.split(',');
    const cells = Object.fromEntries(header.map((name, i) => [name, values[i] ?? '']));
    return { runAt: cells['run_at'] ?? '', commit: cells['commit'] ?? '', figures: numbersOf(cells), cells };
  });
}

export function formatHistory(rows: readonly HistoryRow[]): string {
  const known = [...RUN_COLUMNS, ...BENCH_FIGURES.map((figure) => figure.id)];
  const extra = [...new Set(rows.flatMap((row) => Object.keys(row.cells)))].filter((name) => !known.includes(name));
  const header = [...known, ...extra];
  return [header.join(','), ...rows.map((row) => header.map((name) => row.cells[name] ?? '').join(','))].join('\n') + '\n';
}

/** The rows with this run's row added, unless a row of the same run is there already. */
export function withRun(rows: readonly HistoryRow[], row: HistoryRow): HistoryRow[] {
  return rows.some((existing) => existing.runAt === row.runAt) ? [...rows] : [...rows, row];
}

export function keptRuns(rows: readonly HistoryRow[]): HistoryRow[] {
  return rows.slice(-RUNS_KEPT);
}

export interface FigureStats {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** Runs that measured it. */
  readonly n: number;
}

export function statsOf(rows: readonly HistoryRow[], id: string): FigureStats | null {
  const values = rows.map((row) => row.figures[id]).filter((value): value is number => typeof value === 'number');
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return { median, min: sorted[0] ?? median, max: sorted[sorted.length - 1] ?? median, n: values.length };
}

function numbersOf(cells: Readonly<Record<string, string>>): Record<string, number | null> {
  return Object.fromEntries(
    BENCH_FIGURES.map((figure) => {
      const cell = cells[figure.id] ?? '';
      const value = Number(cell);
      return [figure.id, cell === '' || !Number.isFinite(value) ? null : value];
    }),
  );
}
