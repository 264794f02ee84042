/**
 * Plain counters for benchmarks: requests sent by the ZooKeeper client and sessions opened.
 * Mutated in place; `snapshotStats` gives callers a copy. (Lock activity is reported through
 * LockEvents and `activity()`.)
 */
export interface LockEngineStats {
  /** Requests sent; `multi` counts transactions, `multiOps` the ops they held, `multiRefused` those refused as a whole. */
  readonly zkOps: {
    create: number;
    delete: number;
    get: number;
    exists: number;
    getChildren: number;
    getEphemerals: number;
    setData: number;
    setAcl: number;
    multi: number;
    multiOps: number;
    multiRefused: number;
  };
  sessions: number;
}

export function newStats(): LockEngineStats {
  return {
    zkOps: { create: 0, delete: 0, get: 0, exists: 0, getChildren: 0, getEphemerals: 0, setData: 0, setAcl: 0, multi: 0, multiOps: 0, multiRefused: 0 },
    sessions: 0,
  };
}

export function snapshotStats(stats: LockEngineStats): LockEngineStats {
  return { ...stats, zkOps: { ...stats.zkOps } };
}
