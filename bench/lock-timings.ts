import type { Priority } from '../src/lock/lock-engine.js';
import { type LockEvents, lockEvents } from '../src/lock/lock-events.js';

const MAX_SAMPLES = 500_000;

export interface LockTimings {
  /** Per priority: lock wait (request → held) and hold (held → release), ms, one per key. */
  readonly wait: Record<Priority, number[]>;
  readonly hold: Record<Priority, number[]>;
  /** Grants passed on inside the proxy (local hand-over) and from ZooKeeper. */
  readonly grants: { local: number; zookeeper: number };
}

function emptyTimings(): LockTimings {
  return { wait: { foreground: [], background: [] }, hold: { foreground: [], background: [] }, grants: { local: 0, zookeeper: 0 } };
}

function record(samples: number[], value: number): void {
  if (samples.length < MAX_SAMPLES) samples.push(value);
}

/**
 * Bench-only: exact per-priority lock wait and hold times inside the proxy, from the engine's
 * events (the Prometheus histograms' buckets are too coarse for a p99 a few milliseconds wide).
 */
export class LockTimingRecorder {
  private timings = emptyTimings();

  readonly events: LockEvents = lockEvents({
    granted: (e) => {
      record(this.timings.wait[e.priority], e.waitMs);
      if (e.handedOverLocally) this.timings.grants.local++;
      else this.timings.grants.zookeeper++;
    },
    released: (e) => record(this.timings.hold[e.priority], e.holdMs),
  });

  takeTimings(): LockTimings {
    const taken = this.timings;
    this.timings = emptyTimings();
    return taken;
  }
}
