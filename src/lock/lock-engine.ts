/**
 * The contract every lock implementation honours (ZooKeeper for production, in-memory for a
 * single instance and unit tests). Semantics:
 * - one holder per key at a time, across every engine instance sharing the same backend;
 * - waiters are served by (priority, arrival order): foreground before background, FIFO within
 *   a priority; a holder is never preempted;
 * - `held.lost` aborts when the engine can no longer vouch for the lock (session expired,
 *   connection suspended past the safety margin, forced release by an operator).
 */

export type Priority = 'foreground' | 'background';

export interface LockKey {
  readonly index: string;
  readonly id: string;
}

/** Who holds or waits for a lock, as shown by `inspect` and written into the lock node. */
export interface LockOwner {
  readonly host: string;
  readonly pid: number;
  readonly requestId: string;
}

export interface AcquireOptions {
  /** Maximum wait in the queue; the queue entry is gone before the rejection is seen. */
  readonly timeoutMs: number;
  readonly owner: LockOwner;
  /** Free text for operators (`inspect`), e.g. "PUT /products/_doc/42". */
  readonly message?: string;
  /** Aborting leaves the queue at once and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface AcquireManyOptions extends AcquireOptions {
  /** With `partial`, keys that time out are reported instead of failing the whole call. */
  readonly partial?: boolean;
}

export interface HeldLock {
  readonly key: LockKey;
  readonly priority: Priority;
  readonly acquiredAt: number;
  readonly waitMs: number;
  /** Number of entries ahead of this request in the queue when it arrived (0 = uncontended). */
  readonly queuePositionOnArrival: number;
  /** Aborts when the lock can no longer be trusted; check `lost.aborted` before forwarding. */
  readonly lost: AbortSignal;
  /** Idempotent; resolves once the lock is released, retrying across reconnects. */
  release(): Promise<void>;
}

export interface AcquireManyResult {
  /** Held locks in canonical key order. */
  readonly acquired: readonly HeldLock[];
  /** Keys whose wait timed out (only with `partial: true`). */
  readonly timedOut: readonly LockKey[];
  releaseAll(): Promise<void>;
}

export interface LockHolderInfo {
  readonly owner: LockOwner;
  readonly priority: Priority;
  readonly since: number;
  readonly message: string;
}

export interface LockWaiterInfo {
  readonly priority: Priority;
  readonly owner?: LockOwner;
  /** Queue entry name (e.g. the znode name), for operators. */
  readonly entry: string;
}

export interface LockInspection {
  readonly key: LockKey;
  readonly holder: LockHolderInfo | null;
  readonly queue: readonly LockWaiterInfo[];
}

export type LockServiceState = 'connected' | 'connecting' | 'suspended' | 'unavailable' | 'closed';

export interface LockEngine {
  acquire(key: LockKey, priority: Priority, options: AcquireOptions): Promise<HeldLock>;
  acquireMany(keys: readonly LockKey[], priority: Priority, options: AcquireManyOptions): Promise<AcquireManyResult>;
  inspect(key: LockKey): Promise<LockInspection>;
  /** Keys of `index` that currently have a holder, at most `limit`. */
  listHeld(index: string, limit: number): Promise<readonly LockInspection[]>;
  /** Operator override: removes the holder's lock node. Resolves false when nothing was held. */
  forceRelease(key: LockKey): Promise<boolean>;
  /** Current backend state; writes must not be attempted unless `connected`. */
  state(): LockServiceState;
  onStateChange(listener: (state: LockServiceState) => void): () => void;
  /** Releases every held lock and closes the backend session (ephemeral nodes vanish at once). */
  close(): Promise<void>;
}
