/**
 * The contract every lock implementation honours (ZooKeeper for production, in-memory for a
 * single instance and unit tests). Semantics:
 * - one holder per key at a time, across every engine instance sharing the same backend;
 * - waiters are served by (priority, arrival order): foreground before background, FIFO within
 *   a priority; a holder is never preempted;
 * - `held.lost` aborts when the engine can no longer vouch for the lock (session expired,
 *   connection suspended past the safety margin, forced release by an operator);
 * - requests of one process for one key form a local cohort: the lock passes between them
 *   without a lock-service round trip, within a bound (see the engines).
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

/**
 * What a wait needs of an `AbortSignal`, which is one. The proxy's per-request `ClientGone`
 * (src/http/client-gone.ts) is another that costs no EventTarget per request.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** `AbortSignal.throwIfAborted` for any `CancelSignal`. */
export function throwIfCancelled(signal: CancelSignal | undefined): void {
  if (signal?.aborted === true) throw signal.reason;
}

export interface LockRequest {
  /** Longest wait in the queue; the queue entry is gone before the rejection is seen. */
  readonly timeoutMs: number;
  readonly owner: LockOwner;
  /** Free text for operators (`inspect`), e.g. "PUT /products/_doc/42". */
  readonly message?: string;
  /** The client is gone: leave the queue at once and reject with the signal's reason. */
  readonly signal?: CancelSignal;
}

export interface ReleaseOptions {
  /**
   * `false`: the next holder must get a fresh grant from the lock service (a new fencing token),
   * not a local hand-over. For an exchange whose outcome is unknown (504, reset).
   */
  readonly handOver?: boolean;
}

export interface HeldLock {
  readonly key: LockKey;
  readonly priority: Priority;
  readonly acquiredAt: number;
  readonly waitMs: number;
  /** Number of entries ahead of this request in the queue when it arrived (0 = uncontended). */
  readonly queuePositionOnArrival: number;
  /** True when this holder got the lock from another request of this process (no lock-service round trip). */
  readonly handedOverLocally: boolean;
  /** Aborts when the engine can no longer vouch for the lock (expiry, margin, forced release). */
  readonly lost: AbortSignal;
  /** `lost.aborted`, without making the signal (most holders never need one). */
  readonly isLost: boolean;
  /**
   * Fencing token: the czxid of the `privateLock` node this holder (or its local cohort) stands
   * on. Monotonic across lock-service grants of one key; equal within a local cohort.
   */
  readonly fencingToken: number;
  /** Synchronous: not lost AND the lock-service link is up right now (not suspended). */
  usable(): boolean;
  /**
   * Resolves at once when usable; waits while the link is suspended; rejects with LockLostError
   * when the lock is lost, or with the signal's reason when `signal` aborts.
   */
  untilUsable(signal?: CancelSignal): Promise<void>;
  /** Idempotent. Resolves when the release is committed (or moot: session gone). */
  release(options?: ReleaseOptions): Promise<void>;
  /**
   * `release()` for a caller that never waits for the commit (a bulk gives back hundreds of keys
   * at once): the release is made the same way, but no promise is made for it, and a later
   * `release()` resolves at once.
   */
  releaseInBackground(): void;
}

export interface AcquireEachRequest extends LockRequest {
  /** Called once per key as its lock is granted (any order), synchronously from the engine. */
  readonly onGranted: (lock: HeldLock) => void;
}

export interface AcquireEachResult {
  /**
   * Keys whose wait ended without a grant, by `keyString`, with the reason (LockTimeoutError,
   * LockUnavailableError, the signal's reason). Every key is granted (onGranted) or here, never both.
   */
  readonly failed: ReadonlyMap<string, { readonly key: LockKey; readonly error: Error }>;
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
  acquire(key: LockKey, priority: Priority, request: LockRequest): Promise<HeldLock>;
  /**
   * Many keys WITHOUT hold-and-wait: each key is requested independently (no canonical order, no
   * waiting for one key while holding another on the engine's side); grants arrive through
   * `onGranted` as they come. One deadline and one abort listener for the whole group. Resolves
   * when every key is granted or failed (duplicates count once).
   */
  acquireEach(keys: readonly LockKey[], priority: Priority, request: AcquireEachRequest): Promise<AcquireEachResult>;
  inspect(key: LockKey): Promise<LockInspection>;
  /** Keys of `index` that currently have a holder, at most `limit`. */
  listHeld(index: string, limit: number): Promise<readonly LockInspection[]>;
  /** Operator override: takes the lock from its holder. Resolves false when nothing was held. */
  forceRelease(key: LockKey): Promise<boolean>;
  /** Current backend state; writes must not be attempted unless `connected`. */
  state(): LockServiceState;
  onStateChange(listener: (state: LockServiceState) => void): () => void;
  /** For gauges, read at scrape time: requests holding a lock, requests waiting for one. */
  activity(): { readonly held: number; readonly waiting: number };
  /** Releases every held lock and closes the backend session (ephemeral nodes vanish at once). */
  close(): Promise<void>;
}
