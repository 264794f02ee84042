import type { BenchEnvironment } from './bench-environment.js';
import type { BenchOptions, WorkloadName } from './bench-options.js';
import { runLoad, type LoadResult, type LoadSpec } from './load.js';

/** A goal from issue 6, checked against a measured value; `met` is null when it could not be measured. */
export interface Target {
  readonly goal: string;
  readonly value: number | null;
  readonly met: boolean | null;
}

export interface WorkloadResult {
  readonly workload: WorkloadName;
  /** Flat numbers for the table and the JSON file (null = not measured, e.g. Curator missing). */
  readonly summary: Record<string, number | null>;
  /** Raw per-run load results. */
  readonly runs: Record<string, LoadResult>;
  readonly targets: readonly Target[];
  readonly notes: readonly string[];
}

export interface WorkloadContext {
  readonly env: BenchEnvironment;
  readonly options: BenchOptions;
}

export type Workload = (context: WorkloadContext) => Promise<WorkloadResult>;

/** Rounds for display and JSON (3 significant decimals is below the noise anyway). */
export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function target(goal: string, value: number, met: boolean): Target {
  return { goal, value: round(value), met };
}

/** Warms up with the same load (not measured), then measures. */
export async function measured(context: WorkloadContext, spec: LoadSpec): Promise<LoadResult> {
  const [result] = await measuredTogether(context, [spec]);
  if (result === undefined) throw new Error('no load result');
  return result;
}

/**
 * Runs several loads at once (a flood plus a trickle), warmed up together; `afterWarmup` runs
 * between warm-up and measurement (e.g. to clear counters).
 */
export async function measuredTogether(
  context: WorkloadContext,
  specs: readonly LoadSpec[],
  afterWarmup: () => Promise<unknown> = async () => undefined,
): Promise<LoadResult[]> {
  if (context.options.warmupS > 0) await Promise.all(specs.map((spec) => runLoad({ ...spec, durationS: context.options.warmupS })));
  await afterWarmup();
  return Promise.all(specs.map((spec) => runLoad(spec)));
}

/** Cycles 0..size-1 so every run spreads requests evenly over its documents. */
export function cycle(size: number): () => number {
  let next = 0;
  return () => {
    const value = next % size;
    next++;
    return value;
  };
}

export function randomBelow(size: number): number {
  return Math.floor(Math.random() * size);
}

/** Measures a proxy run, with the proxy process's CPU time per answered request (warm-up excluded). */
export function measuredProxy(context: WorkloadContext, spec: LoadSpec): Promise<{ load: LoadResult; cpuMsPerRequest: number }> {
  return measuredWithCpu(context, spec, async () => (await context.env.proxyStats()).cpuMs);
}

/**
 * Measures a run against a process that reports its own CPU time (`cpuMs`, read from the process
 * itself, so other load on a shared machine does not inflate it): CPU ms per answered request.
 */
export async function measuredWithCpu(
  context: WorkloadContext,
  spec: LoadSpec,
  cpuMs: () => Promise<number>,
): Promise<{ load: LoadResult; cpuMsPerRequest: number }> {
  const counted: { cpuMs?: number } = {};
  const [load] = await measuredTogether(context, [spec], async () => {
    counted.cpuMs = await cpuMs();
  });
  if (load === undefined || counted.cpuMs === undefined) throw new Error('run did not complete');
  const used = (await cpuMs()) - counted.cpuMs;
  return { load, cpuMsPerRequest: used / Math.max(1, load.requests) };
}

/** The proxy against the reference bare proxy (both upstream clients) on the same load, same run. */
export async function versusBare(
  context: WorkloadContext,
  spec: (baseUrl: string, run: string) => LoadSpec,
  proxy: { load: LoadResult; cpuMsPerRequest: number },
): Promise<{ summary: Record<string, number>; runs: Record<string, LoadResult> }> {
  const { env } = context;
  const bare = await measuredWithCpu(context, spec(env.referenceUrl['node-http'], 'b'), () => env.referenceCpuMs('node-http'));
  const bareUndici = await measuredWithCpu(context, spec(env.referenceUrl.undici, 'u'), () => env.referenceCpuMs('undici'));
  return {
    summary: {
      bare_cpu_ms_per_request: round(bare.cpuMsPerRequest, 4),
      bare_undici_cpu_ms_per_request: round(bareUndici.cpuMsPerRequest, 4),
      cpu_ratio_vs_bare: round(proxy.cpuMsPerRequest / bare.cpuMsPerRequest),
      undici_vs_node_http_cpu: round(bareUndici.cpuMsPerRequest / bare.cpuMsPerRequest),
      bare_rps: round(bare.load.rps, 1),
      bare_undici_rps: round(bareUndici.load.rps, 1),
      throughput_ratio_vs_bare: round(proxy.load.rps / bare.load.rps),
      bare_p50_ms: round(bare.load.p50Ms),
      bare_p99_ms: round(bare.load.p99Ms),
      bare_undici_p50_ms: round(bareUndici.load.p50Ms),
      bare_undici_p99_ms: round(bareUndici.load.p99Ms),
    },
    runs: { bare: bare.load, bareUndici: bareUndici.load },
  };
}

/** Direct-vs-proxy numbers every HTTP workload reports. */
export function comparison(direct: LoadResult, proxy: LoadResult, proxyCpuMsPerRequest: number): Record<string, number> {
  return {
    proxy_cpu_ms_per_request: round(proxyCpuMsPerRequest, 4),
    direct_rps: round(direct.rps, 1),
    proxy_rps: round(proxy.rps, 1),
    throughput_ratio: round(proxy.rps / direct.rps),
    direct_p50_ms: round(direct.p50Ms),
    proxy_p50_ms: round(proxy.p50Ms),
    added_p50_ms: round(proxy.p50Ms - direct.p50Ms),
    direct_p99_ms: round(direct.p99Ms),
    proxy_p99_ms: round(proxy.p99Ms),
    added_p99_ms: round(proxy.p99Ms - direct.p99Ms),
    proxy_non2xx: proxy.non2xx + proxy.errors,
  };
}
