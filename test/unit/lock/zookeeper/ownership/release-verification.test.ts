import { describe, expect, it } from 'vitest';
import { listingPrefix } from '../../../../../src/lock/zookeeper/ownership/release-verification.js';

/** The longest common prefix of `${path}/` for every path, by comparing each path in turn. */
function commonPrefixOfEach(paths: readonly string[]): string {
  let prefix = `${paths[0]!}/`;
  for (const path of paths.map((p) => `${p}/`)) {
    let i = 0;
    while (i < prefix.length && i < path.length && prefix[i] === path[i]) i++;
    prefix = prefix.slice(0, i);
  }
  return prefix;
}

describe('the prefix of the listing that verifies a flush of releases', () => {
  const cases: readonly (readonly string[])[] = [
    ['/root/i/d1'],
    ['/root/i/d1', '/root/i/d1'],
    ['/root/i/d1', '/root/i/d2', '/root/i/d10'],
    ['/root/i/d10', '/root/i/d1'],
    ['/root/i/abc', '/root/j/abc', '/root/i/ab'],
    ['/root/products/000123', '/root/products/000199', '/root/products/000150', '/root/products/000100'],
    ['/root/a/x', '/root/b/y'],
  ];

  it('covers every document of the flush, and is the longest such prefix or one character shorter', () => {
    for (const paths of cases) {
      const prefix = listingPrefix(paths);
      for (const path of paths) expect(`${path}/`.startsWith(prefix)).toBe(true);
      const longest = commonPrefixOfEach(paths);
      expect([longest, longest.slice(0, -1)]).toContain(prefix);
    }
  });

  it('lists under one document only, slash included, when the flush names one document', () => {
    expect(listingPrefix(['/root/i/d1', '/root/i/d1'])).toBe('/root/i/d1/');
  });
});
