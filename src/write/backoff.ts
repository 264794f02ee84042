import type { CancelSignal } from '../lock/lock-engine.js';

/**
 * Full-jitter exponential backoff (AWS architecture blog's "full jitter"): spreads re-queued
 * background writes so that writers that timed out together do not come back together.
 */
export function backoffDelayMs(attempt: number, baseMs = 100, capMs = 5_000, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function delay(ms: number, signal?: CancelSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
