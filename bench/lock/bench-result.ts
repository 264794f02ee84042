/** The one JSON line every bench implementation prints. */
export interface BenchResult {
  readonly impl: string;
  readonly workload: string;
  readonly ops: number;
  readonly ops_per_s: number;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly violations: number;
  readonly clients: number;
  readonly per_client?: number;
  readonly release?: string;
  readonly zk_ops_per_lock?: Record<string, number>;
}

export function percentile(sortedMs: readonly number[], p: number): number | null {
  if (sortedMs.length === 0) return null;
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil((p / 100) * sortedMs.length) - 1));
  return Math.round(sortedMs[index]! * 1000) / 1000;
}

/** Counts moments where more than one acquirer believes it holds the same key. */
export class OverlapChecker {
  private readonly holders = new Map<string, number>();
  violations = 0;

  enter(key: string): void {
    const count = (this.holders.get(key) ?? 0) + 1;
    this.holders.set(key, count);
    if (count > 1) this.violations++;
  }

  leave(key: string): void {
    const count = (this.holders.get(key) ?? 1) - 1;
    if (count === 0) this.holders.delete(key);
    else this.holders.set(key, count);
  }
}
