import type { LoadSpec } from '../load.js';
import { comparison, measuredProxy, measured, target, type Workload } from '../workload-result.js';

const INDEX = 'bench-search';
const CONNECTIONS = 64;

/** Searches are not locked: this is the cost of the HTTP hop alone. */
export const passthrough: Workload = async (context) => {
  const { env, options } = context;
  for (let i = 0; i < 20; i++) {
    await fetch(`${env.directUrl}/${INDEX}/_doc/s${i}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: `doc ${i}` }) });
  }
  const spec = (baseUrl: string): LoadSpec => ({
    baseUrl,
    connections: CONNECTIONS,
    durationS: options.durationS,
    method: 'POST',
    pathFor: () => `/${INDEX}/_search`,
    body: () => '{"query":{"match_all":{}},"size":10}',
  });
  const direct = await measured(context, spec(env.directUrl));
  const { load: proxy, cpuMsPerRequest } = await measuredProxy(context, spec(env.proxyUrl));
  const summary = comparison(direct, proxy, cpuMsPerRequest);
  return {
    workload: 'passthrough',
    summary,
    runs: { direct, proxy },
    targets: [
      target('passthrough throughput >= 0.9x direct', summary.throughput_ratio ?? 0, (summary.throughput_ratio ?? 0) >= 0.9),
      target('passthrough added p50 <= 0.3 ms', summary.added_p50_ms ?? 0, (summary.added_p50_ms ?? 0) <= 0.3),
    ],
    notes: [`POST /${INDEX}/_search, ${CONNECTIONS} connections, stand-in read time ${options.readMs} ms`],
  };
};
