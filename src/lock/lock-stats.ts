/**
 * Plain counters for benchmarks and the metrics module (which reads them; no prom-client here).
 * Mutated in place by the engine; `snapshotStats` gives callers a copy.
 */
export interface LockEngineStats {
  /** Requests sent; `multi` counts transactions and `multiOps` the ops they held. */
  readonly zkOps: {
    create: number;
    delete: number;
    get: number;
    getChildren: number;
    setData: number;
    setAcl: number;
    multi: number;
    multiOps: number;
  };
  acquisitions: number;
  /** Acquired with one round trip, without a queue entry. */
  fastPathAcquisitions: number;
  /** Fast-path creates that found someone queued first and gave the lock back. */
  stepBacks: number;
  timeouts: number;
  aborts: number;
  lost: number;
  releases: number;
  /** Deletes that had to be retried after a connection loss. */
  releaseRetries: number;
  sessions: number;
}

export function newStats(): LockEngineStats {
  return {
    zkOps: { create: 0, delete: 0, get: 0, getChildren: 0, setData: 0, setAcl: 0, multi: 0, multiOps: 0 },
    acquisitions: 0,
    fastPathAcquisitions: 0,
    stepBacks: 0,
    timeouts: 0,
    aborts: 0,
    lost: 0,
    releases: 0,
    releaseRetries: 0,
    sessions: 0,
  };
}

export function snapshotStats(stats: LockEngineStats): LockEngineStats {
  return { ...stats, zkOps: { ...stats.zkOps } };
}
