/** One request shape; `pathFor` (called per request) spreads load over documents. */
export interface LoadSpec {
  readonly baseUrl: string;
  readonly connections: number;
  readonly durationS: number;
  readonly method: string;
  readonly pathFor: () => string;
  readonly body?: () => string | Buffer;
  readonly headers?: Record<string, string>;
  /**
   * Requests per second over all connections (a trickle), sent at an even pace by
   * `runPacedLoad` (an open loop); unlimited (autocannon, closed loop) when absent.
   */
  readonly overallRate?: number;
  /** Stop after this many requests instead of after `durationS` (slow requests such as big bulks). */
  readonly amount?: number;
  /** Stops the load early when it settles (a trickle that lasts as long as another load). */
  readonly stopWhen?: Promise<unknown>;
}

export interface LoadResult {
  readonly requests: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly durationS: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  /** Every answered request's latency, sorted (left out of the JSON report). */
  readonly latenciesMs: readonly number[];
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** The middle value of `list` (the upper one of two); NaN when empty. */
export function median(list: readonly number[]): number {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Percentiles and counts of one run; sorts `latencies` in place. */
export function loadResult(latencies: number[], counts: { ok: number; non2xx: number; errors: number }, durationS: number): LoadResult {
  latencies.sort((a, b) => a - b);
  return {
    requests: counts.ok + counts.non2xx,
    ...counts,
    durationS,
    rps: counts.ok / durationS,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    meanMs: latencies.reduce((sum, value) => sum + value, 0) / Math.max(1, latencies.length),
    latenciesMs: latencies,
  };
}

/** Several runs of one load (slices of a measurement) as one: counts and durations add up. */
export function mergeLoadResults(results: readonly LoadResult[]): LoadResult {
  const sum = (pick: (result: LoadResult) => number): number => results.reduce((total, result) => total + pick(result), 0);
  const counts = { ok: sum((r) => r.ok), non2xx: sum((r) => r.non2xx), errors: sum((r) => r.errors) };
  return loadResult(results.flatMap((r) => r.latenciesMs), counts, sum((r) => r.durationS));
}
