import type { LRUCache } from 'lru-cache';

type LruModule = typeof import('lru-cache');

/**
 * The engine's caches preallocate room for 100,000 entries, which dominates the cost of the short
 * engines of a simulated run. A run has a handful of documents (its caches hold the lock root, one
 * index and at most four documents), so a capacity of 64 never evicts and behaves the same. Used
 * as `vi.mock('lru-cache', smallCaches)`.
 */
const SMALL_CAPACITY = 64;

export async function smallCaches(importOriginal: () => Promise<LruModule>): Promise<LruModule> {
  const real = await importOriginal();
  class SmallLRUCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>, FC = unknown> extends real.LRUCache<K, V, FC> {
    constructor(options: LRUCache.Options<K, V, FC>) {
      super({ ...options, max: Math.min(Number(options.max ?? SMALL_CAPACITY), SMALL_CAPACITY) } as LRUCache.Options<K, V, FC>);
    }
  }
  return { ...real, LRUCache: SmallLRUCache as unknown as LruModule['LRUCache'] };
}
