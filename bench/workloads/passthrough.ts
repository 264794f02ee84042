import type { LoadSpec } from '../load.js';
import { againstReferences, comparison, measuredAlternating, target, versusBare, type Workload } from '../workload-result.js';

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
  const { direct, proxy, bare, bareUndici } = await measuredAlternating(context, againstReferences(context, spec));
  const summary = { ...comparison(direct.load, proxy.load, proxy.cpuMsPerRequest), ...versusBare(proxy, bare, bareUndici) };
  const cpuRatio = summary.cpu_ratio_vs_bare ?? 0;
  const vsBare = summary.throughput_ratio_vs_bare ?? 0;
  return {
    workload: 'passthrough',
    summary,
    runs: { direct: direct.load, proxy: proxy.load, bare: bare.load, bareUndici: bareUndici.load },
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
