import type { BenchEnvironment } from './bench-environment.js';
import type { BenchOptions, WorkloadName } from './bench-options.js';
import { mergeLoadResults, runLoad, type LoadResult, type LoadSpec } from './load.js';

/** A goal the project set itself, checked against a measured value; `met` is null when it could not be measured. */
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

/** A measured load, with the CPU time per answered request of the process that served it. */
export interface MeasuredRun {
  readonly load: LoadResult;
  readonly cpuMsPerRequest: number;
  /** The same for the server behind it (`serverCpuMs`), NaN when it was not read. */
  readonly serverCpuMsPerRequest: number;
}

/**
 * One load of `measuredAlternating`; `cpuMs` reads the serving process's own CPU time (ms),
 * `serverCpuMs` that of a server it uses in turn (ZooKeeper, for the proxy; NaN when unreadable).
 */
export interface AlternatingRun {
  readonly spec: LoadSpec;
  readonly cpuMs?: () => Promise<number>;
  readonly serverCpuMs?: () => Promise<number>;
}

/** Slices per way when ways take turns (one when a run is too short to cut). */
export const SLICES = 4;

/**
 * Ways (targets of one load) measured in turns: each warms up, then every way runs one slice in
 * each of `slices` rounds. On a shared machine the load from elsewhere drifts within a minute;
 * measuring a way and its reference one after the other let that drift decide the ratio
 * (cpu_ratio_vs_bare read 1.20 and 1.91 in two back-to-back runs of the same code; bulk 1.43x to
 * 1.90x). Resolves each way's slice results in order.
 */
export async function inTurns<K extends string, R>(
  ways: readonly K[],
  slices: number,
  warmUp: (way: K) => Promise<unknown>,
  slice: (way: K) => Promise<R>,
): Promise<Map<K, R[]>> {
  for (const way of ways) await warmUp(way);
  const results = new Map<K, R[]>(ways.map((way) => [way, []]));
  for (let round = 0; round < slices; round++) {
    for (const way of ways) results.get(way)!.push(await slice(way));
  }
  return results;
}

/** `SLICES`, or one slice when the run is shorter than that many seconds. */
export function slicesFor(durationS: number): number {
  return durationS >= SLICES ? SLICES : 1;
}

/**
 * Measures loads against different targets (stand-in, proxy, bare proxy) in turns (`inTurns`),
 * each slice a share of the duration. CPU is read from each serving process around its own slices
 * only.
 */
export async function measuredAlternating<K extends string>(context: WorkloadContext, runs: Record<K, AlternatingRun>): Promise<Record<K, MeasuredRun>> {
  const { durationS, warmupS } = context.options;
  const names = Object.keys(runs) as K[];
  const slices = slicesFor(durationS);
  const parts = await inTurns(
    names,
    slices,
    (name) => (warmupS > 0 ? runLoad({ ...runs[name].spec, durationS: warmupS }) : Promise.resolve()),
    async (name) => {
      const { spec, cpuMs = async () => 0, serverCpuMs = async () => Number.NaN } = runs[name];
      const [before, serverBefore] = [await cpuMs(), await serverCpuMs()];
      const load = await runLoad({ ...spec, durationS: durationS / slices });
      return { load, cpuMs: (await cpuMs()) - before, serverCpuMs: (await serverCpuMs()) - serverBefore };
    },
  );
  const measuredRuns = {} as Record<K, MeasuredRun>;
  for (const [name, part] of parts) {
    const load = mergeLoadResults(part.map((p) => p.load));
    const perRequest = (ms: number): number => ms / Math.max(1, load.requests);
    const sum = (pick: (p: (typeof part)[number]) => number): number => part.reduce((total, p) => total + pick(p), 0);
    measuredRuns[name] = { load, cpuMsPerRequest: perRequest(sum((p) => p.cpuMs)), serverCpuMsPerRequest: perRequest(sum((p) => p.serverCpuMs)) };
  }
  return measuredRuns;
}

/** The ZooKeeper server's CPU time (ms) as `AlternatingRun.serverCpuMs` reads it; NaN when unreadable. */
export function zookeeperCpuMs(env: WorkloadContext['env']): () => Promise<number> {
  return async () => (await env.zookeeperCpu())?.totalMs ?? Number.NaN;
}

/** The loads of a proxy-vs-references comparison: the stand-in, the proxy, both bare proxies. */
export function againstReferences(context: WorkloadContext, spec: (baseUrl: string, run: string) => LoadSpec): Record<'direct' | 'proxy' | 'bare' | 'bareUndici', AlternatingRun> {
  const { env } = context;
  return {
    direct: { spec: spec(env.directUrl, 'd') },
    proxy: {
      spec: spec(env.proxyUrl, 'p'),
      cpuMs: async () => (await env.proxyStats()).cpuMs,
      serverCpuMs: zookeeperCpuMs(env),
    },
    bare: { spec: spec(env.referenceUrl['node-http'], 'b'), cpuMs: () => env.referenceCpuMs('node-http') },
    bareUndici: { spec: spec(env.referenceUrl.undici, 'u'), cpuMs: () => env.referenceCpuMs('undici') },
  };
}

/** The proxy against the reference bare proxy (both upstream clients) on the same load, same run. */
export function versusBare(proxy: MeasuredRun, bare: MeasuredRun, bareUndici: MeasuredRun): Record<string, number> {
  return {
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
  };
}

/** Direct-vs-proxy numbers every HTTP workload reports. */
export function comparison(direct: LoadResult, proxy: LoadResult, proxyCpuMsPerRequest: number): Record<string, number> {
  return {
    proxy_cpu_ms_per_request: round(proxyCpuMsPerRequest, 4),
    direct_rps: round(direct.rps, 1),
    proxy_rps: round(proxy.rps, 1),
    throughput_ratio: round(proxy.rps / direct.rps),
    ...addedLatency(direct, proxy),
    proxy_non2xx: proxy.non2xx + proxy.errors,
  };
}

/** p50 and p99 straight and through the proxy, and what the proxy added; keys start with `prefix` (`write_direct_p50_ms`). */
export function addedLatency(direct: LoadResult, proxy: LoadResult, prefix = ''): Record<string, number> {
  return {
    [`${prefix}direct_p50_ms`]: round(direct.p50Ms),
    [`${prefix}proxy_p50_ms`]: round(proxy.p50Ms),
    [`${prefix}added_p50_ms`]: round(proxy.p50Ms - direct.p50Ms),
    [`${prefix}direct_p99_ms`]: round(direct.p99Ms),
    [`${prefix}proxy_p99_ms`]: round(proxy.p99Ms),
    [`${prefix}added_p99_ms`]: round(proxy.p99Ms - direct.p99Ms),
  };
}
