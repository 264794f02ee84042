import { runLoad, type LoadResult, type LoadSpec } from '../load.js';
import { cycle, round, target, type Workload, type WorkloadContext } from '../workload-result.js';

const INDEX = 'bench-hot';
const DOCUMENTS = 8;
const CONNECTIONS = 32;

async function runCountingOverlaps(context: WorkloadContext, baseUrl: string): Promise<{ load: LoadResult; overlaps: number; proxyCpuMs: number }> {
  const next = cycle(DOCUMENTS);
  const spec: LoadSpec = {
    baseUrl,
    connections: CONNECTIONS,
    durationS: context.options.durationS,
    method: 'PUT',
    pathFor: () => `/${INDEX}/_doc/hot-${next()}`,
    body: () => '{"field":"value","n":1}',
  };
  if (context.options.warmupS > 0) await runLoad({ ...spec, durationS: context.options.warmupS });
  await context.env.overlaps(); // drains the warm-up's writes before the counters are cleared
  await context.env.resetStandIn();
  const cpuBefore = (await context.env.proxyStats()).cpuMs;
  const load = await runLoad(spec);
  const proxyCpuMs = (await context.env.proxyStats()).cpuMs - cpuBefore;
  return { load, overlaps: await context.env.overlaps(), proxyCpuMs };
}

/**
 * 32 clients on 8 documents: through the proxy each document's writes run one at a time, so the
 * best possible rate is 8 x (1000 / service time); straight to the stand-in they overlap.
 */
export const writeHot: Workload = async (context) => {
  const { env, options } = context;
  const direct = await runCountingOverlaps(context, env.directUrl);
  const proxy = await runCountingOverlaps(context, env.proxyUrl);
  const idealRps = (1000 / Math.max(options.writeMs, 0.001)) * DOCUMENTS;
  const ofIdeal = proxy.load.rps / idealRps;
  return {
    workload: 'write-hot',
    summary: {
      direct_rps: round(direct.load.rps, 1),
      proxy_rps: round(proxy.load.rps, 1),
      serialized_ideal_rps: round(idealRps, 1),
      proxy_vs_ideal: round(ofIdeal),
      direct_overlaps: direct.overlaps,
      proxy_overlaps: proxy.overlaps,
      direct_p50_ms: round(direct.load.p50Ms),
      proxy_p50_ms: round(proxy.load.p50Ms),
      proxy_p99_ms: round(proxy.load.p99Ms),
      proxy_non2xx: proxy.load.non2xx + proxy.load.errors,
      proxy_cpu_ms_per_request: round(proxy.proxyCpuMs / Math.max(1, proxy.load.requests)),
    },
    runs: { direct: direct.load, proxy: proxy.load },
    targets: [
      target('write-hot throughput >= 0.8x serialized ideal', ofIdeal, ofIdeal >= 0.8),
      target('write-hot overlaps through the proxy = 0', proxy.overlaps, proxy.overlaps === 0),
      target('write-hot overlaps direct > 0 (the workload can detect a race)', direct.overlaps, direct.overlaps > 0),
    ],
    notes: [`PUT /${INDEX}/_doc/hot-{0..7}, ${CONNECTIONS} connections; ideal = 8 docs x 1000/${options.writeMs} ms`],
  };
};
