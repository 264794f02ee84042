import { acquireEach, acquireOne } from '../acquire-calls.js';
import { ActivityCount, type GroupContext } from '../acquire-group.js';
import type { LockAcquisition } from '../lock-acquisition.js';
import {
  type AcquireEachRequest,
  type AcquireEachResult,
  type HeldLock,
  type LockEngine,
  type LockInspection,
  type LockKey,
  type LockRequest,
  type LockServiceState,
  type Priority,
  throwIfCancelled,
} from '../lock-engine.js';
import { LockUnavailableError } from '../lock-errors.js';
import { type LockEvents, NO_LOCK_EVENTS } from '../lock-events.js';
import { compareKeys, keyString } from '../lock-key.js';
import { MemoryKey } from './memory-key.js';

export interface MemoryLockEngineOptions {
  readonly events?: LockEvents;
}

/**
 * The same contract and semantics as the ZooKeeper engine inside one process: one holder per
 * key, waiters served by (priority, arrival), holders never preempted, timeouts and aborts leave
 * the queue at once. Every waiter is local, so the lock passes from holder to waiter directly
 * (`handedOverLocally`, same fencing token) unless the holder releases with `handOver: false`.
 * For unit tests and the single-instance mode.
 */
export class MemoryLockEngine implements LockEngine {
  private readonly keys = new Map<string, MemoryKey>();
  private readonly listeners = new Set<(state: LockServiceState) => void>();
  private readonly context: GroupContext;
  private readonly activityCount = new ActivityCount();
  private readonly tokens = { last: 0 };
  private currentState: LockServiceState = 'connected';

  constructor(options: MemoryLockEngineOptions = {}) {
    this.context = { events: options.events ?? NO_LOCK_EVENTS, activity: this.activityCount, withdrawWaitMs: 0 };
  }

  state(): LockServiceState {
    return this.currentState;
  }

  onStateChange(listener: (state: LockServiceState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  activity(): { readonly held: number; readonly waiting: number } {
    return { held: this.activityCount.held, waiting: this.activityCount.waiting };
  }

  async acquire(key: LockKey, priority: Priority, request: LockRequest): Promise<HeldLock> {
    this.throwIfClosed();
    throwIfCancelled(request.signal);
    return acquireOne(this.context, key, priority, request, (members) => this.place(members));
  }

  async acquireEach(keys: readonly LockKey[], priority: Priority, request: AcquireEachRequest): Promise<AcquireEachResult> {
    this.throwIfClosed();
    return acquireEach(this.context, keys, priority, request, (members) => this.place(members));
  }

  async inspect(key: LockKey): Promise<LockInspection> {
    return this.keys.get(keyString(key))?.describe() ?? { key, holder: null, queue: [] };
  }

  async listHeld(index: string, limit: number): Promise<readonly LockInspection[]> {
    return [...this.keys.values()]
      .filter((state) => state.key.index === index && state.holder !== null)
      .sort((a, b) => compareKeys(a.key, b.key))
      .slice(0, limit)
      .map((state) => state.describe());
  }

  async forceRelease(key: LockKey): Promise<boolean> {
    return this.keys.get(keyString(key))?.forceRelease() ?? false;
  }

  async close(): Promise<void> {
    if (this.currentState === 'closed') return;
    const closed = new LockUnavailableError('lock engine closed');
    for (const state of [...this.keys.values()]) await state.close(closed);
    this.currentState = 'closed';
    for (const listener of this.listeners) listener('closed');
  }

  private throwIfClosed(): void {
    if (this.currentState === 'closed') throw new LockUnavailableError('lock engine closed');
  }

  private place(members: readonly LockAcquisition[]): void {
    for (const member of members) this.keyFor(member.key).arrive(member);
  }

  private keyFor(key: LockKey): MemoryKey {
    const id = keyString(key);
    let state = this.keys.get(id);
    if (state === undefined) {
      state = new MemoryKey(key, this.tokens, this.context.events, () => this.keys.delete(id));
      this.keys.set(id, state);
    }
    return state;
  }
}
