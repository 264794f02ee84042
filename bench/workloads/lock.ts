import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { numberField, objectField } from '../child-process.js';
import { round, type Target, type Workload } from '../workload-result.js';

const run = promisify(execFile);
const LOCK_BENCH = fileURLToPath(new URL('../lock-bench.ts', import.meta.url));
const LOCK_WORKLOADS = ['cold', 'warm', 'hot', 'spread'] as const;
type LockWorkload = (typeof LOCK_WORKLOADS)[number];
type Impl = 'es-lock-proxy' | 'curator';

interface LockLine {
  readonly opsPerS: number;
  readonly p50Ms: number | null;
  readonly violations: number;
}

function nullableNumber(value: unknown, name: string): number | null {
  const field = objectField(value, name);
  return typeof field === 'number' && Number.isFinite(field) ? field : null;
}

/**
 * One `npm run bench:lock` run as a subprocess (its own process, like a real client). Resolves
 * null with the reason when it printed no result line (Curator missing, or a failure).
 */
async function lockBench(zk: string, workload: LockWorkload, impl: Impl, ops: number): Promise<LockLine | string> {
  const args = ['--import', 'tsx', LOCK_BENCH, '--zk', zk, '--workload', workload, '--ops', String(ops), '--impl', impl];
  try {
    const { stdout, stderr } = await run(process.execPath, args, { maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
    const line = stdout.trim().split('\n').pop() ?? '';
    if (line === '') return stderr.trim().split('\n').pop() ?? 'no output';
    const parsed: unknown = JSON.parse(line);
    return { opsPerS: numberField(parsed, 'ops_per_s'), p50Ms: nullableNumber(parsed, 'p50_ms'), violations: numberField(parsed, 'violations') };
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n').slice(0, 3).join(' ') : String(error);
    return `bench:lock ${impl} ${workload} failed: ${detail}`;
  }
}

function ratioTarget(goal: string, ours: number | null, theirs: number | null, pass: (ratio: number) => boolean): Target {
  if (ours === null || theirs === null || theirs === 0) return { goal, value: null, met: null };
  const ratio = ours / theirs;
  return { goal, value: round(ratio), met: pass(ratio) };
}

/** The lock engine's own workloads (`bench:lock`), with Curator's InterProcessMutex on the same ZooKeeper when installed. */
export const lock: Workload = async ({ env, options }) => {
  const summary: Record<string, number | null> = {};
  const notes: string[] = [`bench:lock --ops ${options.lockOps} per workload (hot: 8 sessions, spread: 4 sessions x 8 acquirers over 10,000 keys)`];
  if (!options.curator) notes.push('Curator comparison skipped (--no-curator)');
  const results = new Map<string, LockLine | null>();
  for (const workload of LOCK_WORKLOADS) {
    for (const impl of options.curator ? (['es-lock-proxy', 'curator'] as const) : (['es-lock-proxy'] as const)) {
      const line = await lockBench(env.zookeeper, workload, impl, options.lockOps);
      if (typeof line === 'string') notes.push(`${impl} ${workload}: ${line}`);
      const result = typeof line === 'string' ? null : line;
      results.set(`${impl}/${workload}`, result);
      const prefix = `${impl === 'curator' ? 'curator' : 'ours'}_${workload}`;
      summary[`${prefix}_ops_per_s`] = result?.opsPerS ?? null;
      if (workload === 'cold' || workload === 'warm') summary[`${prefix}_p50_ms`] = result?.p50Ms ?? null;
      summary[`${prefix}_violations`] = result?.violations ?? null;
    }
  }
  const ours = (w: LockWorkload): LockLine | null => results.get(`es-lock-proxy/${w}`) ?? null;
  const curator = (w: LockWorkload): LockLine | null => results.get(`curator/${w}`) ?? null;
  const targets: Target[] = [
    ratioTarget('lock cold p50 <= 0.7x Curator', ours('cold')?.p50Ms ?? null, curator('cold')?.p50Ms ?? null, (r) => r <= 0.7),
    ratioTarget('lock warm p50 <= 0.7x Curator', ours('warm')?.p50Ms ?? null, curator('warm')?.p50Ms ?? null, (r) => r <= 0.7),
    ratioTarget('lock hot throughput >= 1.2x Curator', ours('hot')?.opsPerS ?? null, curator('hot')?.opsPerS ?? null, (r) => r >= 1.2),
    ratioTarget('lock spread throughput >= 2x Curator', ours('spread')?.opsPerS ?? null, curator('spread')?.opsPerS ?? null, (r) => r >= 2),
  ];
  const violations = LOCK_WORKLOADS.reduce((sum, w) => sum + (ours(w)?.violations ?? 0), 0);
  targets.push({ goal: 'lock hot/spread violations = 0', value: violations, met: ours('hot') === null ? null : violations === 0 });
  return { workload: 'lock', summary, runs: {}, targets, notes };
};
