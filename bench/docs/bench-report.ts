/**
 * The shape of `bench/results/latest.json` as the documentation reads it: only what the generated
 * pages use, checked on the way in so that a renamed field fails loudly instead of printing "n/a".
 */
export interface BenchTarget {
  readonly goal: string;
  readonly value: number | null;
  readonly met: boolean | null;
}

export interface BenchRun {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  readonly rps: number;
}

export interface BenchWorkload {
  readonly summary: Readonly<Record<string, number | null>>;
  readonly targets: readonly BenchTarget[];
  readonly notes: readonly string[];
  readonly runs: Readonly<Record<string, BenchRun>>;
}

export interface BenchReport {
  readonly generatedAt: string;
  readonly totalSeconds: number;
  readonly loadAverage1m: { readonly atStart: number; readonly atEnd: number };
  readonly machine: Readonly<Record<string, string | number>>;
  readonly options: { readonly durationS: number; readonly warmupS: number; readonly writeMs: number; readonly readMs: number };
  readonly workloads: Readonly<Record<string, BenchWorkload>>;
}

export function parseBenchReport(text: string, source: string): BenchReport {
  const report = JSON.parse(text) as Partial<BenchReport> | null;
  const missing = ['generatedAt', 'totalSeconds', 'loadAverage1m', 'machine', 'options', 'workloads'].filter(
    (field) => report === null || typeof report !== 'object' || !(field in report),
  );
  if (missing.length > 0) throw new Error(`${source}: not a bench report (missing ${missing.join(', ')})`);
  return report as BenchReport;
}

/** One summary number of one workload; null when that workload did not run or could not measure it. */
export function summaryValue(report: BenchReport, workload: string, key: string): number | null {
  const value = report.workloads[workload]?.summary[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
