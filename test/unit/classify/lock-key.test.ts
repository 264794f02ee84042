import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalKeys, compareLockKeys, lockKeyOf } from '../../../src/classify/lock-key.js';

describe('lock keys', () => {
  it('lockKeyOf builds the key', () => {
    expect(lockKeyOf('products', '42')).toEqual({ index: 'products', id: '42' });
  });

  it('dedupes by (index, id) and orders by index bytes, then id bytes', () => {
    const keys = [lockKeyOf('b', '1'), lockKeyOf('a', '2'), lockKeyOf('a', '10'), lockKeyOf('b', '1'), lockKeyOf('a', '2'), lockKeyOf('ab', '0')];
    expect(canonicalKeys(keys)).toEqual([lockKeyOf('a', '10'), lockKeyOf('a', '2'), lockKeyOf('ab', '0'), lockKeyOf('b', '1')]);
  });

  it('orders by UTF-8 bytes, not UTF-16 code units', () => {
    // U+FF5E is one UTF-16 unit above the surrogate-encoded U+1F4A9 but below it in UTF-8.
    expect(canonicalKeys([lockKeyOf('i', '💩'), lockKeyOf('i', '～')])).toEqual([lockKeyOf('i', '～'), lockKeyOf('i', '💩')]);
    expect('💩' < '～').toBe(true);
  });

  it('keeps distinct keys whose UTF-8 bytes collide (lone surrogates) in a fixed order', () => {
    const a = lockKeyOf('i', '\ud800');
    const b = lockKeyOf('i', '\udc00');
    expect(canonicalKeys([b, a])).toEqual([a, b]);
    expect(canonicalKeys([a, b])).toEqual([a, b]);
  });

  it('is a total order every instance agrees on (property)', () => {
    const key = fc.record({ index: fc.string({ unit: 'binary' }), id: fc.string({ unit: 'binary' }) });
    fc.assert(
      fc.property(fc.array(key, { maxLength: 30 }), fc.array(key, { maxLength: 30 }), (keys, shuffleSeed) => {
        const once = canonicalKeys(keys);
        const again = canonicalKeys([...keys].reverse().concat(shuffleSeed.length > 0 ? keys.slice(0, 1) : []));
        expect(again).toEqual(once);
        expect(new Set(once.map((k) => JSON.stringify([k.index, k.id]))).size).toBe(once.length);
        for (let i = 1; i < once.length; i++) {
          const [prev, next] = [once[i - 1], once[i]];
          if (prev === undefined || next === undefined) throw new Error('unreachable');
          expect(compareLockKeys(prev, next)).toBeLessThan(0);
          expect(compareLockKeys(next, prev)).toBeGreaterThan(0);
        }
      }),
    );
  });
});
