import type {
  AcquireManyResult,
  HeldLock,
  LockEngine,
  LockInspection,
  LockKey,
  LockServiceState,
  Priority,
} from '../../../src/lock/lock-engine.js';

/**
 * A LockEngine whose every acquire waits until the test grants or refuses it, and whose state
 * the test sets: enough to drive the metrics decorators step by step. Not a lock.
 */
export class ScriptedLockEngine implements LockEngine {
  readonly pending: { readonly grant: () => void; readonly refuse: (error: Error) => void }[] = [];
  readonly releases: LockKey[] = [];
  private current: LockServiceState = 'connecting';
  private readonly listeners = new Set<(state: LockServiceState) => void>();

  acquire(key: LockKey, priority: Priority): Promise<HeldLock> {
    return new Promise((resolve, reject) => {
      this.pending.push({ grant: () => resolve(this.heldLock(key, priority)), refuse: reject });
    });
  }

  acquireMany(keys: readonly LockKey[], priority: Priority): Promise<AcquireManyResult> {
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        const acquired = keys.map((key) => this.heldLock(key, priority));
        resolve({ acquired, timedOut: [], releaseAll: async () => void (await Promise.all(acquired.map((lock) => lock.release()))) });
      };
      this.pending.push({ grant, refuse: reject });
    });
  }

  async inspect(key: LockKey): Promise<LockInspection> {
    return { key, holder: null, queue: [] };
  }

  async listHeld(): Promise<readonly LockInspection[]> {
    return [];
  }

  async forceRelease(): Promise<boolean> {
    return false;
  }

  state(): LockServiceState {
    return this.current;
  }

  setState(state: LockServiceState): void {
    this.current = state;
    for (const listener of this.listeners) listener(state);
  }

  onStateChange(listener: (state: LockServiceState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.setState('closed');
  }

  private heldLock(key: LockKey, priority: Priority): HeldLock {
    return {
      key,
      priority,
      acquiredAt: Date.now(),
      waitMs: 0,
      queuePositionOnArrival: 0,
      lost: new AbortController().signal,
      release: async () => {
        this.releases.push(key);
      },
    };
  }
}
