import { runClosedLoop } from '../closed-loop.js';
import type { LoadResult } from '../load.js';
import { round, target, type Workload, type WorkloadContext } from '../workload-result.js';

const INDEX = 'bench-hot';
const DOCUMENTS = 8;
const CONNECTIONS = 32;

type Way = 'direct' | 'perfect' | 'proxy' | 'two-proxies';

/**
 * One closed-loop run (see closed-loop.ts) of 32 writers over 8 documents: straight to the
 * stand-in (`direct`, unserialized: the oracle must see overlaps), straight to the stand-in
 * through a per-document mutex in the load generator (`perfect`: the reference), through one
 * proxy, and through two proxies (half of the writers each).
 */
async function runWay(context: WorkloadContext, way: Way): Promise<{ load: LoadResult; overlaps: number; proxyCpuMs: number }> {
  const { env, options } = context;
  const baseUrls = way === 'proxy' ? [env.proxyUrl] : way === 'two-proxies' ? env.proxyUrls : [env.directUrl];
  const spec = {
    baseUrls,
    connections: CONNECTIONS,
    durationS: options.durationS,
    documents: DOCUMENTS,
    path: (document: number) => `/${INDEX}/_doc/hot-${document}`,
    body: '{"field":"value","n":1}',
    perDocumentMutex: way === 'perfect',
  };
  if (options.warmupS > 0) await runClosedLoop({ ...spec, durationS: options.warmupS });
  await env.overlaps(); // drains the warm-up's writes before the counters are cleared
  await env.resetStandIn();
  const cpuBefore = (await env.proxyStats()).cpuMs;
  const load = await runClosedLoop(spec);
  const proxyCpuMs = (await env.proxyStats()).cpuMs - cpuBefore;
  return { load, overlaps: await env.overlaps(), proxyCpuMs };
}

/**
 * 32 clients on 8 documents: serialized per document, the best possible rate is what a perfect
 * lock gives (measured, not computed: the stand-in's own overhead counts for both).
 */
export const writeHot: Workload = async (context) => {
  const { options } = context;
  const direct = await runWay(context, 'direct');
  const perfect = await runWay(context, 'perfect');
  const proxy = await runWay(context, 'proxy');
  const twoProxies = await runWay(context, 'two-proxies');
  const idealRps = (1000 / Math.max(options.writeMs, 0.001)) * DOCUMENTS;
  const ofPerfect = proxy.load.rps / perfect.load.rps;
  const twoOfPerfect = twoProxies.load.rps / perfect.load.rps;
  return {
    workload: 'write-hot',
    summary: {
      direct_rps: round(direct.load.rps, 1),
      perfect_lock_rps: round(perfect.load.rps, 1),
      proxy_rps: round(proxy.load.rps, 1),
      two_proxies_rps: round(twoProxies.load.rps, 1),
      proxy_vs_perfect: round(ofPerfect),
      two_proxies_vs_perfect: round(twoOfPerfect),
      serialized_ideal_rps: round(idealRps, 1),
      direct_overlaps: direct.overlaps,
      perfect_overlaps: perfect.overlaps,
      proxy_overlaps: proxy.overlaps,
      two_proxies_overlaps: twoProxies.overlaps,
      perfect_p50_ms: round(perfect.load.p50Ms),
      proxy_p50_ms: round(proxy.load.p50Ms),
      proxy_p99_ms: round(proxy.load.p99Ms),
      two_proxies_p99_ms: round(twoProxies.load.p99Ms),
      proxy_non2xx: proxy.load.non2xx + proxy.load.errors + twoProxies.load.non2xx + twoProxies.load.errors,
      proxy_cpu_ms_per_request: round(proxy.proxyCpuMs / Math.max(1, proxy.load.requests)),
    },
    runs: { direct: direct.load, perfect: perfect.load, proxy: proxy.load, two_proxies: twoProxies.load },
    targets: [
      target('write-hot one proxy >= 0.8x the perfect lock', ofPerfect, ofPerfect >= 0.8),
      target('write-hot two proxies >= 0.8x the perfect lock', twoOfPerfect, twoOfPerfect >= 0.8),
      target('write-hot overlaps through the proxies = 0', proxy.overlaps + twoProxies.overlaps, proxy.overlaps + twoProxies.overlaps === 0),
      target('write-hot overlaps direct > 0 (the workload can detect a race)', direct.overlaps, direct.overlaps > 0),
    ],
    notes: [
      `PUT /${INDEX}/_doc/hot-{0..7}, ${CONNECTIONS} closed-loop writers (bench/closed-loop.ts) for every way; two proxies: 16 writers each`,
      'perfect lock = the same writers straight to the stand-in through a FIFO mutex per document in the load generator',
    ],
  };
};
