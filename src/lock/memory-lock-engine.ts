import { acquireManyOrdered } from './acquire-many.js';
import { HeldLockHandle } from './held-lock.js';
import type {
  AcquireManyOptions,
  AcquireManyResult,
  AcquireOptions,
  HeldLock,
  LockEngine,
  LockInspection,
  LockKey,
  LockOwner,
  LockServiceState,
  Priority,
} from './lock-engine.js';
import { LockTimeoutError, LockUnavailableError } from './lock-errors.js';
import { type LockEngineStats, newStats, snapshotStats } from './lock-stats.js';
import { compareKeys, keyString } from './znode-names.js';

interface Waiter {
  readonly priority: Priority;
  readonly sequence: number;
  readonly owner: LockOwner;
  readonly arrivedAt: number;
  readonly positionOnArrival: number;
  readonly grant: () => void;
  readonly fail: (error: unknown) => void;
}

interface Holder {
  readonly handle: HeldLockHandle;
  readonly owner: LockOwner;
  readonly message: string;
}

interface KeyState {
  readonly key: LockKey;
  holder: Holder | null;
  queue: Waiter[];
}

const PRIORITY_RANK: Record<Priority, number> = { foreground: 0, background: 1 };

/** A waiter that a newcomer of `priority` queues behind (same or higher priority). */
function servedBefore(waiter: Waiter, priority: Priority): boolean {
  return PRIORITY_RANK[waiter.priority] <= PRIORITY_RANK[priority];
}

/** Nobody holds the key and nobody is queued that a newcomer of `priority` must wait for. */
function isFreeFor(state: KeyState, priority: Priority): boolean {
  return state.holder === null && !state.queue.some((w) => servedBefore(w, priority));
}

/**
 * The same contract and semantics as the ZooKeeper engine inside one process: one holder per
 * key, waiters served by (priority, arrival), holders never preempted, timeouts and aborts leave
 * the queue at once. For unit tests and the single-instance mode.
 */
export class MemoryLockEngine implements LockEngine {
  private readonly keys = new Map<string, KeyState>();
  private readonly listeners = new Set<(state: LockServiceState) => void>();
  private readonly engineStats = newStats();
  private currentState: LockServiceState = 'connected';
  private sequence = 0;

  stats(): LockEngineStats {
    return snapshotStats(this.engineStats);
  }

  state(): LockServiceState {
    return this.currentState;
  }

  onStateChange(listener: (state: LockServiceState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async acquire(key: LockKey, priority: Priority, options: AcquireOptions): Promise<HeldLock> {
    this.throwIfClosed();
    options.signal?.throwIfAborted();
    const state = this.stateOf(key);
    const startedAt = Date.now();
    if (isFreeFor(state, priority)) return this.grant(state, priority, options, startedAt, 0);
    return this.enqueue(state, priority, options, startedAt);
  }

  async acquireMany(keys: readonly LockKey[], priority: Priority, options: AcquireManyOptions): Promise<AcquireManyResult> {
    this.throwIfClosed();
    return acquireManyOrdered(
      {
        tryAcquire: async (key, p, o) => {
          const state = this.stateOf(key);
          if (!isFreeFor(state, p)) {
            this.forgetIfIdle(state);
            return null;
          }
          return this.grant(state, p, o, Date.now(), 0);
        },
        acquire: (key, p, o) => this.acquire(key, p, o),
      },
      keys,
      priority,
      options,
    );
  }

  async inspect(key: LockKey): Promise<LockInspection> {
    const state = this.keys.get(keyString(key));
    if (state === undefined) return { key, holder: null, queue: [] };
    return this.describe(state);
  }

  async listHeld(index: string, limit: number): Promise<readonly LockInspection[]> {
    return [...this.keys.values()]
      .filter((state) => state.key.index === index && state.holder !== null)
      .sort((a, b) => compareKeys(a.key, b.key))
      .slice(0, limit)
      .map((state) => this.describe(state));
  }

  async forceRelease(key: LockKey): Promise<boolean> {
    const state = this.keys.get(keyString(key));
    const holder = state?.holder;
    if (state === undefined || holder === null || holder === undefined) return false;
    if (holder.handle.markLost('forced release by an operator')) this.engineStats.lost++;
    state.holder = null;
    this.handOver(state);
    return true;
  }

  async close(): Promise<void> {
    if (this.currentState === 'closed') return;
    const closed = new LockUnavailableError('lock engine closed');
    for (const state of this.keys.values()) {
      for (const waiter of state.queue) waiter.fail(closed);
      state.queue = [];
      if (state.holder !== null) await state.holder.handle.release();
    }
    this.currentState = 'closed';
    for (const listener of this.listeners) listener('closed');
  }

  private throwIfClosed(): void {
    if (this.currentState === 'closed') throw new LockUnavailableError('lock engine closed');
  }

  private stateOf(key: LockKey): KeyState {
    const id = keyString(key);
    let state = this.keys.get(id);
    if (state === undefined) {
      state = { key: { index: key.index, id: key.id }, holder: null, queue: [] };
      this.keys.set(id, state);
    }
    return state;
  }

  private forgetIfIdle(state: KeyState): void {
    if (state.holder === null && state.queue.length === 0) this.keys.delete(keyString(state.key));
  }

  private grant(state: KeyState, priority: Priority, options: AcquireOptions, startedAt: number, position: number): HeldLock {
    const now = Date.now();
    const handle: HeldLockHandle = new HeldLockHandle({
      key: state.key,
      priority,
      acquiredAt: now,
      waitMs: now - startedAt,
      queuePositionOnArrival: position,
      release: async () => {
        if (state.holder?.handle === handle) {
          state.holder = null;
          this.handOver(state);
        }
        this.engineStats.releases++;
      },
    });
    state.holder = { handle, owner: options.owner, message: options.message ?? '' };
    this.engineStats.acquisitions++;
    return handle;
  }

  private enqueue(state: KeyState, priority: Priority, options: AcquireOptions, startedAt: number): Promise<HeldLock> {
    return new Promise<HeldLock>((resolve, reject) => {
      const ahead = state.queue.filter((w) => servedBefore(w, priority)).length;
      const leaveQueue = (): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        state.queue = state.queue.filter((w) => w !== waiter);
      };
      const waiter: Waiter = {
        priority,
        sequence: this.sequence++,
        owner: options.owner,
        arrivedAt: startedAt,
        positionOnArrival: ahead + (state.holder === null ? 0 : 1),
        grant: () => {
          leaveQueue();
          resolve(this.grant(state, priority, options, startedAt, waiter.positionOnArrival));
        },
        fail: (error) => {
          leaveQueue();
          if (state.holder === null) this.handOver(state);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.engineStats.timeouts++;
        waiter.fail(new LockTimeoutError(state.key, options.timeoutMs));
      }, options.timeoutMs);
      const onAbort = (): void => {
        this.engineStats.aborts++;
        waiter.fail(options.signal?.reason);
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      state.queue.push(waiter);
      state.queue.sort((a, b) => PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] || a.sequence - b.sequence);
    });
  }

  private handOver(state: KeyState): void {
    const next = state.queue[0];
    if (next === undefined) {
      this.forgetIfIdle(state);
      return;
    }
    next.grant();
  }

  private describe(state: KeyState): LockInspection {
    const holder = state.holder;
    return {
      key: state.key,
      holder:
        holder === null
          ? null
          : { owner: holder.owner, priority: holder.handle.priority, since: holder.handle.acquiredAt, message: holder.message },
      queue: state.queue.map((w) => ({
        priority: w.priority,
        owner: w.owner,
        entry: `${w.priority === 'foreground' ? 'A' : 'B'}-${String(w.sequence).padStart(10, '0')}`,
      })),
    };
  }
}
