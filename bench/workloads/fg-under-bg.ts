import type { ProxyStats } from '../bench-environment.js';
import { percentile, type LoadResult, type LoadSpec } from '../load.js';
import { measuredTogether, randomBelow, round, target, type Workload, type WorkloadContext } from '../workload-result.js';

const INDEX = 'bench-priority';
const DOCUMENTS = 50;
const FLOOD_CONNECTIONS = 128;
const TRICKLE_CONNECTIONS = 8;
const TRICKLE_RATE = 40;

function writes(context: WorkloadContext, baseUrl: string, priority: 'foreground' | 'background', trickle: boolean): LoadSpec {
  return {
    baseUrl,
    connections: trickle ? TRICKLE_CONNECTIONS : FLOOD_CONNECTIONS,
    durationS: context.options.durationS,
    method: 'PUT',
    pathFor: () => `/${INDEX}/_doc/p-${randomBelow(DOCUMENTS)}`,
    body: () => '{"field":"value","n":1}',
    headers: { 'X-Lock-Type': priority },
    ...(trickle ? { overallRate: TRICKLE_RATE } : {}),
  };
}

interface MixedRun {
  readonly flood: LoadResult;
  readonly trickle: LoadResult;
  readonly stats: ProxyStats | null;
}

/** A background flood and a foreground trickle at once; `trickleAs` is the header the trickle carries. */
async function mixedRun(context: WorkloadContext, baseUrl: string, trickleAs: 'foreground' | 'background', viaProxy: boolean): Promise<MixedRun> {
  const clearTimings = async (): Promise<unknown> => (viaProxy ? context.env.proxyStats() : undefined);
  const specs = [writes(context, baseUrl, 'background', false), writes(context, baseUrl, trickleAs, true)];
  const [flood, trickle] = await measuredTogether(context, specs, clearTimings);
  if (flood === undefined || trickle === undefined) throw new Error('fg-under-bg: a load did not run');
  return { flood, trickle, stats: viaProxy ? await context.env.proxyStats() : null };
}

function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/**
 * Priority under load. The FIFO comparison runs the same load with the trickle sent as
 * background too — both prefixes equal, so the queue is plain arrival order — and compares
 * the trickle's latency and lock wait across the two runs.
 */
export const fgUnderBg: Workload = async (context) => {
  const { env } = context;
  const direct = await mixedRun(context, env.directUrl, 'foreground', false);
  const priority = await mixedRun(context, env.proxyUrl, 'foreground', true);
  const fifo = await mixedRun(context, env.proxyUrl, 'background', true);
  const fgWait = sorted(priority.stats?.wait.foreground ?? []);
  const bgWait = sorted(priority.stats?.wait.background ?? []);
  const bgHold = sorted(priority.stats?.hold.background ?? []);
  const fifoWait = sorted(fifo.stats?.wait.background ?? []);
  const holdP50 = percentile(bgHold, 50);
  const fgWaitP99 = percentile(fgWait, 99);
  return {
    workload: 'fg-under-bg',
    summary: {
      bg_hold_p50_ms: round(holdP50),
      local_hand_over_share: round((priority.stats?.grants.local ?? 0) / Math.max(1, (priority.stats?.grants.local ?? 0) + (priority.stats?.grants.zookeeper ?? 0))),
      fg_wait_p50_ms: round(percentile(fgWait, 50)),
      fg_wait_p99_ms: round(fgWaitP99),
      bg_wait_p50_ms: round(percentile(bgWait, 50)),
      bg_wait_p99_ms: round(percentile(bgWait, 99)),
      fifo_wait_p50_ms: round(percentile(fifoWait, 50)),
      fifo_wait_p99_ms: round(percentile(fifoWait, 99)),
      fg_p50_ms_direct: round(direct.trickle.p50Ms),
      fg_p99_ms_direct: round(direct.trickle.p99Ms),
      fg_p50_ms_priority: round(priority.trickle.p50Ms),
      fg_p99_ms_priority: round(priority.trickle.p99Ms),
      fg_p50_ms_fifo: round(fifo.trickle.p50Ms),
      fg_p99_ms_fifo: round(fifo.trickle.p99Ms),
      bg_p50_ms_priority: round(priority.flood.p50Ms),
      bg_p99_ms_priority: round(priority.flood.p99Ms),
      bg_rps_direct: round(direct.flood.rps, 1),
      bg_rps_proxy: round(priority.flood.rps, 1),
      fg_requests_proxy: priority.trickle.ok,
      proxy_non2xx: priority.flood.non2xx + priority.trickle.non2xx + priority.flood.errors + priority.trickle.errors,
    },
    runs: {
      direct_flood: direct.flood,
      direct_trickle: direct.trickle,
      priority_flood: priority.flood,
      priority_trickle: priority.trickle,
      fifo_flood: fifo.flood,
      fifo_trickle: fifo.trickle,
    },
    targets: [target('fg p99 lock wait under a bg flood <= 2x one bg hold (p50)', fgWaitP99 / holdP50, fgWaitP99 <= 2 * holdP50)],
    notes: [
      `flood: ${FLOOD_CONNECTIONS} connections, background, ${DOCUMENTS} docs; trickle: ${TRICKLE_RATE}/s over ${TRICKLE_CONNECTIONS} connections, same docs`,
      'lock wait/hold measured inside the proxy process (acquire call → held, held → release); target value = fg p99 wait / bg p50 hold',
      'FIFO run: same load, trickle sent as background (equal prefixes → arrival order); fifo_wait_* = lock wait of every request in that run',
    ],
  };
};
