import type { AcquireManyOptions, AcquireManyResult, HeldLock, LockKey, Priority } from './lock-engine.js';
import { LockTimeoutError } from './lock-errors.js';
import { canonicalKeys } from './znode-names.js';

/** The two primitives both engines offer for `acquireMany`. */
export interface LockPrimitives {
  /** Never waits: null when the key is held or someone is queued ahead. */
  tryAcquire(key: LockKey, priority: Priority, options: AcquireManyOptions): Promise<HeldLock | null>;
  acquire(key: LockKey, priority: Priority, options: AcquireManyOptions): Promise<HeldLock>;
}

/**
 * Deadlock-free multi-key acquisition that stays one round trip for uncontended keys.
 *
 * Keys are deduplicated and put in one canonical order shared by every process. Each round
 * first tries all still-missing keys in parallel WITHOUT waiting (pipelined on the session, so
 * 1,000 free keys cost about one round trip, not 1,000), then waits only for the first missing
 * key in canonical order, after giving back every opportunistically held key that comes after it.
 *
 * Why this cannot deadlock: a process only ever *waits* for key k while holding keys that all
 * precede k (the later ones were just released). A try never waits, so it adds no wait-for edge.
 * A cycle of waiting processes would need one of them to wait for a key that precedes a key it
 * holds, which never happens; so every wait-for chain ends at a holder that is not waiting.
 */
export async function acquireManyOrdered(
  primitives: LockPrimitives,
  keys: readonly LockKey[],
  priority: Priority,
  options: AcquireManyOptions,
): Promise<AcquireManyResult> {
  const ordered = canonicalKeys(keys);
  const deadline = Date.now() + options.timeoutMs;
  const held = new Map<number, HeldLock>();
  const timedOut: LockKey[] = [];
  const gaveUp = new Set<number>();
  const releaseAll = async (): Promise<void> => {
    await Promise.all([...held.values()].map((lock) => lock.release()));
  };
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      const missing = ordered.map((_, i) => i).filter((i) => !held.has(i) && !gaveUp.has(i));
      const tries = await Promise.all(missing.map((i) => primitives.tryAcquire(ordered[i]!, priority, options)));
      tries.forEach((lock, n) => {
        if (lock !== null) held.set(missing[n]!, lock);
      });
      const first = missing.find((i) => !held.has(i));
      if (first === undefined) break;
      const later = [...held.entries()].filter(([i]) => i > first);
      for (const [i, lock] of later) {
        held.delete(i);
        void lock.release();
      }
      const remaining = deadline - Date.now();
      try {
        if (remaining <= 0) throw new LockTimeoutError(ordered[first]!, options.timeoutMs);
        held.set(first, await primitives.acquire(ordered[first]!, priority, { ...options, timeoutMs: remaining }));
      } catch (error) {
        if (!(error instanceof LockTimeoutError) || options.partial !== true) throw error;
        gaveUp.add(first);
        timedOut.push(ordered[first]!);
      }
    }
  } catch (error) {
    await releaseAll();
    throw error;
  }
  const acquired = [...held.entries()].sort(([a], [b]) => a - b).map(([, lock]) => lock);
  return { acquired, timedOut, releaseAll };
}
