import { describe, expect, it } from 'vitest';
import { decodeSegment, documentPath, encodeSegment, normalizeRoot } from '../../../../src/lock/zookeeper/znode-names.js';

describe('znode names', () => {
  const awkward = ['a/b', 'a%2Fb', '.', '..', 'ünï', '😀', 'c\u0000\u001f\u007f', ' ', 'x'.repeat(512), 'zookeeper', 'A-0000000001'];

  it('encodes every id into a legal, reversible, distinct znode name', () => {
    const encoded = awkward.map(encodeSegment);
    expect(new Set(encoded).size).toBe(awkward.length);
    for (const [i, name] of encoded.entries()) {
      expect(name).toMatch(/^[A-Za-z0-9_%-]+$/);
      expect(name).not.toMatch(/^\.{1,2}$/);
      expect(decodeSegment(name)).toBe(awkward[i]);
    }
  });

  it('bounds a 512-byte id to 1,536 characters', () => {
    expect(encodeSegment('€'.repeat(170)).length).toBeLessThanOrEqual(1_536);
  });

  it('rejects an empty id with a typed error', () => {
    expect(() => encodeSegment('')).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
  });

  it('builds {root}/{index}/{id} paths', () => {
    expect(documentPath(normalizeRoot('/es/locks/'), { index: 'products', id: 'a/b' })).toBe('/es/locks/products/a%2Fb');
  });
});
