import { keyString } from '../../lock/lock-key.js';
import type { KeyedBulkItem } from '../bulk-items.js';

/**
 * Splits a sub-bulk into waves sent one after the other: wave k holds the k-th item of each
 * document (and wave 0 the items without a lock). A fence is the state read before the wave; the
 * second item of a document in one request could not be fenced with it (its `_seq_no` is only
 * known once the first is applied), so it goes in the next wave, after a fresh read.
 */
export function bulkWaves(items: readonly KeyedBulkItem[]): KeyedBulkItem[][] {
  const waves: KeyedBulkItem[][] = [];
  const seen = new Map<string, number>();
  for (const keyed of items) {
    const id = keyed.key === null ? null : keyString(keyed.key);
    const wave = id === null ? 0 : (seen.get(id) ?? 0);
    if (id !== null) seen.set(id, wave + 1);
    (waves[wave] ??= []).push(keyed);
  }
  return waves;
}
