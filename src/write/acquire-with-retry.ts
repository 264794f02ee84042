import type { HeldLock, LockKey, Priority } from '../lock/lock-engine.js';
import { backOff, retriesAfterTimeout } from './background-retry.js';
import type { WriteRequest } from './write-request.js';
import { isLockTimeout } from './lock-errors.js';
import { lockTimeoutMs, ownerOf, type WritePathDeps } from './write-path-deps.js';
import { singleWriteReporter } from './write-observer.js';

export type SingleAcquireResult =
  | { readonly kind: 'held'; readonly lock: HeldLock; readonly attemptTimes: readonly number[]; readonly waitedMs: number }
  | {
      readonly kind: 'timed_out';
      readonly attemptTimes: readonly number[];
      readonly waitedMs: number;
      readonly timeoutMs: number;
    }
  | { readonly kind: 'aborted'; readonly attemptTimes: readonly number[] };

/**
 * Acquires one document's lock; a wait that times out is retried or given up on as
 * background-retry.ts decides. `aborted`: the client hung up during a backoff. Other failures
 * (ZooKeeper unavailable, client gone while waiting) propagate.
 */
export async function acquireWithRetry(
  deps: WritePathDeps,
  exchange: WriteRequest,
  key: LockKey,
  priority: Priority,
  message: string,
): Promise<SingleAcquireResult> {
  const startedAt = Date.now();
  const attemptTimes: number[] = [];
  for (let attempt = 1; ; attempt++) {
    attemptTimes.push(Date.now());
    const settings = deps.settings();
    const timeoutMs = lockTimeoutMs(settings, priority);
    try {
      const lock = await deps.locks.acquire(key, priority, {
        timeoutMs,
        owner: ownerOf(exchange),
        message,
        signal: exchange.clientGone,
      });
      return { kind: 'held', lock, attemptTimes, waitedMs: Date.now() - startedAt };
    } catch (error) {
      if (!isLockTimeout(error)) throw error;
      const waitedMs = Date.now() - startedAt;
      if (!retriesAfterTimeout(settings, priority, attempt)) return { kind: 'timed_out', attemptTimes, waitedMs, timeoutMs };
      singleWriteReporter(deps.observer, exchange, key, priority)('retried', waitedMs, 0, null, attempt);
      if (!(await backOff(attempt, exchange.clientGone))) return { kind: 'aborted', attemptTimes };
    }
  }
}
