import type { HeldLock, LockKey, Priority } from '../lock/lock-engine.js';
import { backoffDelayMs, delay } from './backoff.js';
import type { InterceptedRequest as ClientExchange } from '../http/write-interceptor.js';
import { isLockTimeout } from './lock-errors-http.js';
import { lockTimeoutMs, ownerOf, type WritePathDeps } from './write-path-deps.js';
import { singleWriteReporter } from './write-observer.js';

export type SingleAcquireResult =
  | { readonly kind: 'held'; readonly lock: HeldLock; readonly attemptTimes: readonly number[]; readonly waitedMs: number }
  | {
      readonly kind: 'timed_out';
      readonly attemptTimes: readonly number[];
      readonly waitedMs: number;
      readonly timeoutMs: number;
    };

/**
 * Acquires one document's lock. A background request whose wait times out goes back into the
 * queue up to `elastic.request.retry.count` times with jittered backoff (the original plugin's
 * retry before the dead-letter queue); a foreground one gets a single wait. Other failures
 * (ZooKeeper unavailable, client gone) propagate.
 */
export async function acquireWithRetry(
  deps: WritePathDeps,
  exchange: ClientExchange,
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
      const retriesLeft = priority === 'background' && attempt <= settings.elasticsearch.requestRetryCount;
      if (!retriesLeft) return { kind: 'timed_out', attemptTimes, waitedMs: Date.now() - startedAt, timeoutMs };
      singleWriteReporter(deps.observer, exchange, key, priority)('retried', Date.now() - startedAt, 0, null, attempt);
      await delay(backoffDelayMs(attempt - 1), exchange.clientGone);
    }
  }
}
