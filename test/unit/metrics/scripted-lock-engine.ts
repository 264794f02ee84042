import type {
  AcquireEachResult,
  HeldLock,
  LockEngine,
  LockInspection,
  LockKey,
  LockServiceState,
} from '../../../src/lock/lock-engine.js';

/**
 * A LockEngine whose state and activity the test sets: enough to drive the metrics that follow an
 * engine. It grants nothing (not a lock).
 */
export class ScriptedLockEngine implements LockEngine {
  current: { held: number; waiting: number } = { held: 0, waiting: 0 };
  private currentState: LockServiceState = 'connecting';
  private readonly listeners = new Set<(state: LockServiceState) => void>();

  acquire(): Promise<HeldLock> {
    return Promise.reject(new Error('scripted engine grants nothing'));
  }

  acquireEach(): Promise<AcquireEachResult> {
    return Promise.reject(new Error('scripted engine grants nothing'));
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

  activity(): { readonly held: number; readonly waiting: number } {
    return this.current;
  }

  state(): LockServiceState {
    return this.currentState;
  }

  setState(state: LockServiceState): void {
    this.currentState = state;
    for (const listener of this.listeners) listener(state);
  }

  onStateChange(listener: (state: LockServiceState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.setState('closed');
  }
}
