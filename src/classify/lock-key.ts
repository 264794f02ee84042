import type { LockKey } from '../lock/lock-engine.js';

export function lockKeyOf(index: string, id: string): LockKey {
  return { index, id };
}

/**
 * The keys without duplicates, in the one order every proxy instance uses to take several locks
 * (deadlock avoidance needs a total order all instances agree on): by the UTF-8 bytes of the index,
 * then of the id. Strings that encode to the same bytes (lone surrogates both become U+FFFD) are
 * still distinct keys; they are ordered by UTF-16 code units so the order stays total.
 */
export function canonicalKeys(keys: readonly LockKey[]): LockKey[] {
  const distinct = new Map<string, SortableKey>();
  for (const key of keys) {
    const identity = JSON.stringify([key.index, key.id]);
    if (!distinct.has(identity)) distinct.set(identity, sortable(key));
  }
  return [...distinct.values()].sort(compareSortable).map((entry) => entry.key);
}

/** Total order on keys: UTF-8 bytes of index, then of id (see `canonicalKeys`). */
export function compareLockKeys(a: LockKey, b: LockKey): number {
  return compareSortable(sortable(a), sortable(b));
}

interface SortableKey {
  readonly key: LockKey;
  readonly index: Buffer;
  readonly id: Buffer;
}

function sortable(key: LockKey): SortableKey {
  return { key, index: Buffer.from(key.index, 'utf8'), id: Buffer.from(key.id, 'utf8') };
}

function compareSortable(a: SortableKey, b: SortableKey): number {
  return (
    Buffer.compare(a.index, b.index) ||
    Buffer.compare(a.id, b.id) ||
    compareCodeUnits(a.key.index, b.key.index) ||
    compareCodeUnits(a.key.id, b.key.id)
  );
}

function compareCodeUnits(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}
