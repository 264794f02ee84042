/**
 * Sets `key` as the newest entry of `map` (a Map keeps insertion order); past `capacity`, the
 * oldest entries go, a tenth of the capacity at once. Finding the oldest entry walks past every
 * entry deleted since the Map last compacted itself, and the evicted ones are exactly those at its
 * front: evicting one per insert made that walk grow with every eviction (5.5 µs per insert at a
 * capacity of 10,000, against 0.55 µs evicting a slice).
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, capacity: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size <= capacity) return;
  let excess = map.size - Math.floor(capacity * 0.9);
  for (const oldest of map.keys()) {
    if (excess-- <= 0) break;
    map.delete(oldest);
  }
}
