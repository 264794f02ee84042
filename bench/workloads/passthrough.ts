import type { LoadSpec } from '../load.js';
import { comparison, measuredProxy, measured, target, versusBare, type Workload } from '../workload-result.js';

const INDEX = 'bench-search';
const CONNECTIONS = 64;

/** Searches are not locked: this is the cost of the HTTP hop alone, against a bare pipe proxy. */
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
  const proxied = await measuredProxy(context, spec(env.proxyUrl));
  const bare = await versusBare(context, spec, proxied);
  const summary = { ...comparison(direct, proxied.load, proxied.cpuMsPerRequest), ...bare.summary };
  const cpuRatio = summary.cpu_ratio_vs_bare ?? 0;
  const vsBare = summary.throughput_ratio_vs_bare ?? 0;
  return {
    workload: 'passthrough',
    summary,
    runs: { direct, proxy: proxied.load, ...bare.runs },
    targets: [
      target('search CPU per request <= 1.3x the bare proxy', cpuRatio, cpuRatio <= 1.3),
      target('passthrough throughput >= 0.9x the bare proxy', vsBare, vsBare >= 0.9),
      target('passthrough throughput >= 0.9x direct', summary.throughput_ratio ?? 0, (summary.throughput_ratio ?? 0) >= 0.9),
    ],
    notes: [
      `POST /${INDEX}/_search, ${CONNECTIONS} connections, stand-in read time ${options.readMs} ms; ` +
        'bare = bench/reference-proxy-process.ts (node:http pipe proxy, keep-alive agent; bare_undici: the same with an undici Pool)',
    ],
  };
};
