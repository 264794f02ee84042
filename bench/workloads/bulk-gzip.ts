import { gzipSync } from 'node:zlib';
import type { BenchEnvironment } from '../bench-environment.js';
import { mergeLoadResults, type LoadResult } from '../load.js';
import { cycle, inTurns, round, SLICES, target, type Workload } from '../workload-result.js';
import { BULK_CONNECTIONS, BULK_ID_POOL, BULK_INDEX, BULK_SIZE, bulkBodies, bulkCount, bulksPerSlice, bulksWithTrickle, type BulkShape } from './bulk.js';

/** The level the shippers send at: Beats, Elastic Agent, Logstash and the OpenTelemetry exporter default to 1. */
const GZIP_LEVEL = 1;
/** Distinct bulk bodies, compressed once up front: the load generator's CPU stays out of the run. */
const BODY_POOL = 64;

type Way = 'direct' | 'plain' | 'gzip';

/**
 * The bulk workload with gzip bodies (level 1, as the shippers send them), against the same bulks
 * uncompressed through the proxy and the gzip bulks sent to the stand-in directly — the three
 * in turns (`inTurns`), the foreground trickle running with each. Bodies that arrive compressed
 * are inflated to be locked (and, when a document is held, split into sub-bulks sent
 * uncompressed); the others go upstream as they came.
 */
export const bulkGzip: Workload = async (context) => {
  const { env, options } = context;
  const shapes = bulkShapes();
  const perSlice = bulksPerSlice(options.durationS);
  const cpuMs: Record<Way, number> = { direct: 0, plain: 0, gzip: 0 };
  const urlOf = (way: Way): string => (way === 'direct' ? env.directUrl : env.proxyUrl);
  const shapeOf = (way: Way): BulkShape => (way === 'plain' ? shapes.plain : shapes.gzip);
  const slices = await inTurns(
    ['direct', 'plain', 'gzip'] as const,
    SLICES,
    (way) => (options.warmupS > 0 ? bulksWithTrickle(urlOf(way), bulkCount(options.warmupS), shapeOf(way)) : Promise.resolve()),
    (way) => sliceWithCpu(env, way === 'direct' ? null : cpuMs, way, () => bulksWithTrickle(urlOf(way), perSlice, shapeOf(way))),
  );
  const bulksOf = (way: Way): LoadResult => mergeLoadResults((slices.get(way) ?? []).map((slice) => slice[0]));
  const [direct, plain, gzip] = [bulksOf('direct'), bulksOf('plain'), bulksOf('gzip')];
  const timeRatio = gzip.p50Ms / plain.p50Ms;
  const cpuPerBulk = (way: Way, load: LoadResult): number => cpuMs[way] / Math.max(1, load.ok);
  const trickles = [...slices.values()].flat().map((slice) => slice[1]);
  return {
    workload: 'bulk-gzip',
    summary: {
      direct_gzip_bulk_p50_ms: round(direct.p50Ms),
      proxy_plain_bulk_p50_ms: round(plain.p50Ms),
      proxy_gzip_bulk_p50_ms: round(gzip.p50Ms),
      gzip_vs_plain_time_ratio: round(timeRatio),
      gzip_vs_direct_time_ratio: round(gzip.p50Ms / direct.p50Ms),
      plain_vs_direct_time_ratio: round(plain.p50Ms / direct.p50Ms),
      proxy_plain_cpu_ms_per_bulk: round(cpuPerBulk('plain', plain)),
      proxy_gzip_cpu_ms_per_bulk: round(cpuPerBulk('gzip', gzip)),
      gzip_vs_plain_cpu_ratio: round(cpuPerBulk('gzip', gzip) / Math.max(1e-9, cpuPerBulk('plain', plain))),
      plain_body_bytes: shapes.plainBytes,
      gzip_body_bytes: shapes.gzipBytes,
      proxy_bulks: plain.ok + gzip.ok,
      non2xx: [direct, plain, gzip, ...trickles].reduce((sum, load) => sum + load.non2xx + load.errors, 0),
    },
    runs: { direct_gzip_bulks: direct, proxy_plain_bulks: plain, proxy_gzip_bulks: gzip },
    targets: [target('gzip bulk through the proxy <= 1.1x the same bulk uncompressed through the proxy (p50 time)', timeRatio, timeRatio <= 1.1)],
    notes: [
      `${SLICES * perSlice} bulks per way in ${SLICES} rounds of direct (gzip), proxy (plain), proxy (gzip) over ${BULK_CONNECTIONS} connections, background, ${BULK_SIZE} index actions of consecutive ids from a pool of ${BULK_ID_POOL} (the bulk workload's), ${BODY_POOL} distinct bodies gzipped at level ${GZIP_LEVEL} up front; the bulk workload's foreground trickle runs with every slice`,
      `proxy_*_cpu_ms_per_bulk = the proxy process's CPU over that way's slices (its foreground writes included) / bulks`,
    ],
  };
};

interface BulkShapes {
  readonly plain: BulkShape;
  readonly gzip: BulkShape;
  readonly plainBytes: number;
  readonly gzipBytes: number;
}

/** The same bodies plain and gzipped, taken in the same order by both ways. */
function bulkShapes(): BulkShapes {
  const next = bulkBodies(BULK_INDEX, BULK_ID_POOL);
  const plain = Array.from({ length: BODY_POOL }, () => Buffer.from(next()));
  const gzipped = plain.map((body) => gzipSync(body, { level: GZIP_LEVEL }));
  const [plainAt, gzipAt] = [cycle(BODY_POOL), cycle(BODY_POOL)];
  const mean = (bodies: readonly Buffer[]): number => Math.round(bodies.reduce((sum, body) => sum + body.length, 0) / bodies.length);
  return {
    plain: { body: () => plain[plainAt()] ?? Buffer.alloc(0) },
    gzip: { body: () => gzipped[gzipAt()] ?? Buffer.alloc(0), headers: { 'content-encoding': 'gzip' } },
    plainBytes: mean(plain),
    gzipBytes: mean(gzipped),
  };
}

/** One slice, adding the proxy's CPU over it to `cpuMs[way]` (`null`: not the proxy's slice). */
async function sliceWithCpu<R>(env: BenchEnvironment, cpuMs: Record<Way, number> | null, way: Way, run: () => Promise<R>): Promise<R> {
  if (cpuMs === null) return run();
  const before = (await env.proxyStats()).cpuMs;
  const result = await run();
  cpuMs[way] += (await env.proxyStats()).cpuMs - before;
  return result;
}
