import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon';

/** One request shape; `pathFor` (called per request) spreads load over documents. */
export interface LoadSpec {
  readonly baseUrl: string;
  readonly connections: number;
  readonly durationS: number;
  readonly method: string;
  readonly pathFor: () => string;
  readonly body?: () => string;
  readonly headers?: Record<string, string>;
  /** Requests per second over all connections (a trickle); unlimited when absent. */
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
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/**
 * Runs autocannon and measures latency from its per-response event: autocannon's own histogram
 * rounds to whole milliseconds, too coarse for a target of 0.3 ms added latency.
 */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const latencies: number[] = [];
  let ok = 0;
  let non2xx = 0;
  const request: AutocannonRequest = {
    method: spec.method,
    headers: { 'content-type': 'application/json', ...spec.headers },
    setupRequest: (raw) => ({ ...raw, path: spec.pathFor(), ...(spec.body === undefined ? {} : { body: spec.body() }) }),
  };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.baseUrl,
        connections: spec.connections,
        duration: spec.durationS,
        timeout: 60,
        requests: [request],
        ...(spec.overallRate === undefined ? {} : { overallRate: spec.overallRate }),
        ...(spec.amount === undefined ? {} : { amount: spec.amount }),
      },
      (error: Error | null, result: AutocannonResult) => {
        if (error !== null) {
          reject(error);
          return;
        }
        latencies.sort((a, b) => a - b);
        const durationS = result.duration;
        resolve({
          requests: ok + non2xx,
          ok,
          non2xx,
          errors: result.errors,
          durationS,
          rps: ok / durationS,
          p50Ms: percentile(latencies, 50),
          p99Ms: percentile(latencies, 99),
          meanMs: latencies.reduce((sum, value) => sum + value, 0) / Math.max(1, latencies.length),
        });
      },
    );
    void spec.stopWhen?.finally(() => instance.stop());
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        latencies.push(responseTimeMs);
      } else {
        non2xx++;
      }
    });
  });
}
