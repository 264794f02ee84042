import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon';
import { loadResult, type LoadResult, type LoadSpec } from './load-spec.js';
import { runPacedLoad } from './paced-load.js';

export { loadResult, mergeLoadResults, percentile, type LoadResult, type LoadSpec } from './load-spec.js';

/**
 * Runs a load: at an even pace when it has an `overallRate` (bench/paced-load.ts), else a closed
 * loop through autocannon, with latency from its per-response event (autocannon's own histogram
 * rounds to whole milliseconds, too coarse for a target of 0.3 ms added latency).
 */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  if (spec.overallRate !== undefined) return runPacedLoad(spec, spec.overallRate);
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
        ...(spec.amount === undefined ? {} : { amount: spec.amount }),
      },
      (error: Error | null, result: AutocannonResult) => {
        if (error !== null) {
          reject(error);
          return;
        }
        resolve(loadResult(latencies, { ok, non2xx, errors: result.errors }, result.duration));
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
