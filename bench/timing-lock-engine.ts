import type {
  AcquireManyOptions,
  AcquireManyResult,
  AcquireOptions,
  HeldLock,
  LockEngine,
  LockInspection,
  LockKey,
  LockServiceState,
  Priority,
} from '../src/lock/lock-engine.js';

const MAX_SAMPLES = 500_000;

export interface LockTimings {
  /** Per priority: lock wait (acquire called → held) and hold (held → release called), ms. */
  readonly wait: Record<Priority, number[]>;
  readonly hold: Record<Priority, number[]>;
}

function emptyTimings(): LockTimings {
  return { wait: { foreground: [], background: [] }, hold: { foreground: [], background: [] } };
}

function record(samples: number[], value: number): void {
  if (samples.length < MAX_SAMPLES) samples.push(value);
}

/**
 * Bench-only decorator: measures exact per-priority lock wait and hold times inside the proxy
 * (the Prometheus histograms' buckets are too coarse for a p99 a few milliseconds wide).
 */
export class TimingLockEngine implements LockEngine {
  private timings = emptyTimings();

  constructor(private readonly inner: LockEngine) {}

  takeTimings(): LockTimings {
    const taken = this.timings;
    this.timings = emptyTimings();
    return taken;
  }

  async acquire(key: LockKey, priority: Priority, options: AcquireOptions): Promise<HeldLock> {
    const started = performance.now();
    const held = await this.inner.acquire(key, priority, options);
    record(this.timings.wait[priority], performance.now() - started);
    return this.timedRelease(held, performance.now());
  }

  async acquireMany(keys: readonly LockKey[], priority: Priority, options: AcquireManyOptions): Promise<AcquireManyResult> {
    const started = performance.now();
    const result = await this.inner.acquireMany(keys, priority, options);
    const heldAt = performance.now();
    record(this.timings.wait[priority], heldAt - started);
    return {
      acquired: result.acquired,
      timedOut: result.timedOut,
      releaseAll: () => {
        record(this.timings.hold[priority], performance.now() - heldAt);
        return result.releaseAll();
      },
    };
  }

  inspect(key: LockKey): Promise<LockInspection> {
    return this.inner.inspect(key);
  }

  listHeld(index: string, limit: number): Promise<readonly LockInspection[]> {
    return this.inner.listHeld(index, limit);
  }

  forceRelease(key: LockKey): Promise<boolean> {
    return this.inner.forceRelease(key);
  }

  state(): LockServiceState {
    return this.inner.state();
  }

  onStateChange(listener: (state: LockServiceState) => void): () => void {
    return this.inner.onStateChange(listener);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private timedRelease(held: HeldLock, heldAt: number): HeldLock {
    let released = false;
    return {
      key: held.key,
      priority: held.priority,
      acquiredAt: held.acquiredAt,
      waitMs: held.waitMs,
      queuePositionOnArrival: held.queuePositionOnArrival,
      lost: held.lost,
      release: () => {
        if (!released) record(this.timings.hold[held.priority], performance.now() - heldAt);
        released = true;
        return held.release();
      },
    };
  }
}
