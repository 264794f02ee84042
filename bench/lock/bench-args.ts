/** Command line of `npm run bench:lock`. */
export type Workload = 'cold' | 'warm' | 'hot' | 'spread';
export type Impl = 'es-lock-proxy' | 'curator';

/** `await`: each release is awaited before the next acquire; `pipelined`: not, as the proxy does (docs/benchmarks.md, Method). */
export type ReleaseMode = 'await' | 'pipelined';

export interface BenchArgs {
  readonly zk: string | null;
  readonly workload: Workload;
  readonly ops: number;
  readonly clients: number;
  readonly impl: Impl;
  readonly keys: number;
  /** Workers per session (hot and spread). */
  readonly perClient: number;
  readonly release: ReleaseMode;
}

const WORKLOADS: readonly Workload[] = ['cold', 'warm', 'hot', 'spread'];

function valueOf(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

function positiveInt(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined) return fallback;
  const value = Number.parseInt(raw, 10);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return value;
}

export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const workloadRaw = valueOf(argv, 'workload') ?? 'warm';
  const workload = WORKLOADS.find((w) => w === workloadRaw);
  if (workload === undefined) throw new Error(`--workload must be one of ${WORKLOADS.join('|')}, got ${workloadRaw}`);
  const implRaw = valueOf(argv, 'impl') ?? 'es-lock-proxy';
  if (implRaw !== 'es-lock-proxy' && implRaw !== 'curator') throw new Error(`--impl must be es-lock-proxy|curator, got ${implRaw}`);
  // hot: 2 sessions x 4 workers by default (8 threads on one key for both implementations).
  const defaultClients = workload === 'hot' ? 2 : workload === 'spread' ? 4 : 1;
  const defaultPerClient = workload === 'hot' ? 4 : 8;
  const release = valueOf(argv, 'release') ?? 'await';
  if (release !== 'await' && release !== 'pipelined') throw new Error(`--release must be await|pipelined, got ${release}`);
  return {
    zk: valueOf(argv, 'zk') ?? null,
    workload,
    ops: positiveInt(valueOf(argv, 'ops'), 2_000, 'ops'),
    clients: workload === 'cold' || workload === 'warm' ? 1 : positiveInt(valueOf(argv, 'clients'), defaultClients, 'clients'),
    impl: implRaw,
    keys: positiveInt(valueOf(argv, 'keys'), 10_000, 'keys'),
    perClient: positiveInt(valueOf(argv, 'per-client'), defaultPerClient, 'per-client'),
    release,
  };
}
