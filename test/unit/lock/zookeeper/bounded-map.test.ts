import { describe, expect, it } from 'vitest';
import { setBounded } from '../../../../src/lock/zookeeper/bounded-map.js';

describe('setBounded', () => {
  it('never holds more than its capacity and keeps the newest entries', () => {
    const map = new Map<string, number>();
    for (let i = 0; i < 1_000; i++) {
      setBounded(map, `k${i}`, i, 100);
      expect(map.size).toBeLessThanOrEqual(100);
    }
    expect(map.get('k999')).toBe(999);
    expect(map.has('k0')).toBe(false);
    // What it keeps is the newest run of keys, in insertion order.
    const kept = [...map.keys()].map((key) => Number(key.slice(1)));
    expect(kept).toEqual(kept.map((_, n) => 1_000 - kept.length + n));
    expect(kept.length).toBeGreaterThanOrEqual(90);
  });

  it('makes a key set again the newest, so it outlives keys set after it the first time', () => {
    const map = new Map<string, number>();
    for (let i = 0; i < 100; i++) setBounded(map, `k${i}`, i, 100);
    setBounded(map, 'k0', -1, 100);
    for (let i = 100; i < 150; i++) setBounded(map, `k${i}`, i, 100);
    expect(map.get('k0')).toBe(-1);
    expect(map.has('k1')).toBe(false);
  });
});
