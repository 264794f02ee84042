import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { benchScript } from '../bench-script.js';
import { numberField, objectField } from '../child-process.js';
import { round, type Target, type Workload } from '../workload-result.js';

const run = promisify(execFile);
const LOCK_BENCH = benchScript('./lock-bench.ts');
type Impl = 'es-lock-proxy' | 'curator';

interface LockLine {
  readonly opsPerS: number;
  readonly p50Ms: number | null;
  readonly violations: number;
}

/** One `bench:lock` configuration, run for both implementations with the same arguments. */
interface LockRun {
  readonly name: string;
  readonly args: readonly string[];
  /** es-lock-proxy only: a release mode Curator has no equivalent of. */
  readonly oursOnly?: boolean;
}

const RUNS: readonly LockRun[] = [
  { name: 'cold', args: ['--workload', 'cold', '--release', 'await'] },
  { name: 'cold_pipelined', args: ['--workload', 'cold', '--release', 'pipelined'], oursOnly: true },
  { name: 'warm', args: ['--workload', 'warm', '--release', 'await'] },
  { name: 'warm_pipelined', args: ['--workload', 'warm', '--release', 'pipelined'], oursOnly: true },
  { name: 'hot', args: ['--workload', 'hot', '--clients', '2', '--per-client', '4'] },
  { name: 'hot_8x1', args: ['--workload', 'hot', '--clients', '8', '--per-client', '1'] },
  { name: 'spread', args: ['--workload', 'spread', '--clients', '4', '--per-client', '8', '--release', 'await'] },
  { name: 'spread_pipelined', args: ['--workload', 'spread', '--clients', '4', '--per-client', '8', '--release', 'pipelined'], oursOnly: true },
];

function nullableNumber(value: unknown, name: string): number | null {
  const field = objectField(value, name);
  return typeof field === 'number' && Number.isFinite(field) ? field : null;
}

/**
 * One `npm run bench:lock` run as a subprocess (its own process, like a real client). Resolves
 * the reason when it printed no result line (Curator missing, or a failure).
 */
async function lockBench(zk: string, impl: Impl, ops: number, args: readonly string[]): Promise<LockLine | string> {
  const argv = [...LOCK_BENCH, '--zk', zk, '--ops', String(ops), '--impl', impl, ...args];
  try {
    const { stdout, stderr } = await run(process.execPath, argv, { maxBuffer: 16 * 1024 * 1024, timeout: 300_000 });
    const line = stdout.trim().split('\n').pop() ?? '';
    if (line === '') return stderr.trim().split('\n').pop() ?? 'no output';
    const parsed: unknown = JSON.parse(line);
    return { opsPerS: numberField(parsed, 'ops_per_s'), p50Ms: nullableNumber(parsed, 'p50_ms'), violations: numberField(parsed, 'violations') };
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n').slice(0, 3).join(' ') : String(error);
    return `bench:lock ${impl} ${args.join(' ')} failed: ${detail}`;
  }
}

function ratioTarget(goal: string, ours: number | null | undefined, theirs: number | null | undefined, pass: (ratio: number) => boolean): Target {
  if (ours === null || ours === undefined || theirs === null || theirs === undefined || theirs === 0) return { goal, value: null, met: null };
  const ratio = ours / theirs;
  return { goal, value: round(ratio), met: pass(ratio) };
}

/** The lock engine's own workloads (`bench:lock`), with Curator's InterProcessMutex on the same ZooKeeper when installed. */
export const lock: Workload = async ({ env, options }) => {
  const summary: Record<string, number | null> = {};
  const notes: string[] = [
    `bench:lock --ops ${options.lockOps} per run; hot: one key, 2 sessions x 4 workers for both implementations (hot_8x1: 8 sessions x 1 worker: no local hand-over possible); spread: 4 sessions x 8 workers over 10,000 keys`,
    'cold/warm/spread: acquire + release per op, the release awaited; *_pipelined (ours only): the release not awaited, as the proxy does (ZooKeeper serves the next request of the session after it); Curator\'s release is synchronous',
  ];
  if (!options.curator) notes.push('Curator comparison skipped (--no-curator)');
  const results = new Map<string, LockLine | null>();
  for (const lockRun of RUNS) {
    const impls: Impl[] = options.curator && lockRun.oursOnly !== true ? ['es-lock-proxy', 'curator'] : ['es-lock-proxy'];
    for (const impl of impls) {
      const line = await lockBench(env.zookeeper, impl, options.lockOps, lockRun.args);
      if (typeof line === 'string') notes.push(`${impl} ${lockRun.name}: ${line}`);
      const result = typeof line === 'string' ? null : line;
      results.set(`${impl}/${lockRun.name}`, result);
      const prefix = `${impl === 'curator' ? 'curator' : 'ours'}_${lockRun.name}`;
      summary[`${prefix}_ops_per_s`] = result?.opsPerS ?? null;
      if (lockRun.name.startsWith('cold') || lockRun.name.startsWith('warm')) summary[`${prefix}_p50_ms`] = result?.p50Ms ?? null;
      summary[`${prefix}_violations`] = result?.violations ?? null;
    }
  }
  const ours = (name: string): LockLine | null => results.get(`es-lock-proxy/${name}`) ?? null;
  const curator = (name: string): LockLine | null => results.get(`curator/${name}`) ?? null;
  const targets: Target[] = [
    ratioTarget('lock cold p50 <= 0.7x Curator (release awaited)', ours('cold')?.p50Ms, curator('cold')?.p50Ms, (r) => r <= 0.7),
    ratioTarget('lock cold p50 <= 0.7x Curator (ours pipelined)', ours('cold_pipelined')?.p50Ms, curator('cold')?.p50Ms, (r) => r <= 0.7),
    ratioTarget('lock warm p50 <= 0.7x Curator (release awaited)', ours('warm')?.p50Ms, curator('warm')?.p50Ms, (r) => r <= 0.7),
    ratioTarget('lock warm p50 <= 0.7x Curator (ours pipelined)', ours('warm_pipelined')?.p50Ms, curator('warm')?.p50Ms, (r) => r <= 0.7),
    ratioTarget('lock hot (2 sessions x 4) throughput >= 1.2x Curator', ours('hot')?.opsPerS, curator('hot')?.opsPerS, (r) => r >= 1.2),
    ratioTarget('lock hot (8 sessions x 1) throughput >= 1.2x Curator', ours('hot_8x1')?.opsPerS, curator('hot_8x1')?.opsPerS, (r) => r >= 1.2),
    ratioTarget('lock spread throughput >= 2x Curator (release awaited)', ours('spread')?.opsPerS, curator('spread')?.opsPerS, (r) => r >= 2),
    ratioTarget('lock spread throughput >= 2x Curator (ours pipelined)', ours('spread_pipelined')?.opsPerS, curator('spread')?.opsPerS, (r) => r >= 2),
  ];
  const violations = RUNS.reduce((sum, r) => sum + (ours(r.name)?.violations ?? 0), 0);
  targets.push({ goal: 'lock violations = 0', value: violations, met: ours('hot') === null ? null : violations === 0 });
  return { workload: 'lock', summary, runs: {}, targets, notes };
};
