/** Command line of `npm run bench -- [options]`. */
export const WORKLOADS = ['passthrough', 'write-uncontended', 'open-loop', 'write-hot', 'fg-under-bg', 'bulk', 'bulk-gzip', 'bulk-streams', 'lock', 'fencing', 'tls', 'auth-flood'] as const;
export type WorkloadName = (typeof WORKLOADS)[number];

export interface BenchOptions {
  readonly workloads: readonly WorkloadName[];
  /** Measured seconds per run (each workload runs direct and through the proxy). */
  readonly durationS: number;
  /** Unmeasured seconds before each run (connections, JIT, ZooKeeper containers). */
  readonly warmupS: number;
  readonly writeMs: number;
  readonly readMs: number;
  /** Extra stand-in time per bulk document (a real cluster's bulk is not flat). */
  readonly bulkDocMs: number;
  /** Operations per `bench:lock` run. */
  readonly lockOps: number;
  /** Use a running ZooKeeper instead of starting one. */
  readonly zk: string | null;
  readonly out: string;
  /** Run the proxy with `--cpu-prof` (profiles under bench/results/profiles). */
  readonly cpuProf: boolean;
  /** Skip the Curator comparison of the lock workloads (the smoke test: javac takes seconds). */
  readonly curator: boolean;
}

export const USAGE = `npm run bench -- [--workload ${WORKLOADS.join('|')}[,...]] [--duration S] [--warmup S] [--quick]
  [--write-ms 5] [--read-ms 1] [--bulk-doc-ms 0.05] [--lock-ops 2000] [--zk HOST:PORT] [--out FILE] [--cpu-prof] [--no-curator]`;

function valueOf(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const value = argv[i + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`--${name} needs a value\n${USAGE}`);
  return value;
}

function nonNegative(argv: readonly string[], name: string, fallback: number): number {
  const raw = valueOf(argv, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a non-negative number, got ${raw}\n${USAGE}`);
  return value;
}

function workloadsOf(raw: string | undefined): WorkloadName[] {
  if (raw === undefined || raw === 'all') return [...WORKLOADS];
  return raw.split(',').map((name) => {
    const found = WORKLOADS.find((w) => w === name.trim());
    if (found === undefined) throw new Error(`unknown workload ${name}\n${USAGE}`);
    return found;
  });
}

export function parseBenchOptions(argv: readonly string[]): BenchOptions {
  const known = new Set(['--quick', '--cpu-prof', '--no-curator', '--help']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}\n${USAGE}`);
    if (!known.has(arg)) i++;
  }
  const quick = argv.includes('--quick');
  const durationS = nonNegative(argv, 'duration', quick ? 1 : 10);
  return {
    workloads: workloadsOf(valueOf(argv, 'workload')),
    durationS: Math.max(1, durationS),
    warmupS: nonNegative(argv, 'warmup', quick || durationS <= 1 ? 0.3 : 2),
    writeMs: nonNegative(argv, 'write-ms', 5),
    readMs: nonNegative(argv, 'read-ms', 1),
    bulkDocMs: nonNegative(argv, 'bulk-doc-ms', 0.05),
    lockOps: Math.max(1, Math.round(nonNegative(argv, 'lock-ops', quick || durationS <= 1 ? 100 : 2_000))),
    zk: valueOf(argv, 'zk') ?? null,
    out: valueOf(argv, 'out') ?? 'bench/results/latest.json',
    cpuProf: argv.includes('--cpu-prof'),
    curator: !argv.includes('--no-curator'),
  };
}
