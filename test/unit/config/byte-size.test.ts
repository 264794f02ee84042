import { describe, expect, it } from 'vitest';
import { formatByteSize, parseByteSize } from '../../../src/config/byte-size.js';

describe('parseByteSize', () => {
  it.each([
    ['104857600', 104_857_600],
    ['0', 0],
    ['1b', 1],
    ['512kb', 512 * 1024],
    ['512k', 512 * 1024],
    ['100mb', 100 * 1024 ** 2],
    ['100MB', 100 * 1024 ** 2],
    ['100 mb', 100 * 1024 ** 2],
    [' 2gb ', 2 * 1024 ** 3],
    ['1tb', 1024 ** 4],
    ['1pb', 1024 ** 5],
    ['1.5kb', 1536],
    ['0.5b', 0],
  ])('%s -> %d bytes', (text, bytes) => {
    expect(parseByteSize(text)).toBe(bytes);
  });

  it.each(['', 'mb', '-1', '1.5', '10 megabytes', '1e3', '1,000', '0x10', '10xb', '99999999pb'])('rejects %j', (text) => {
    expect(parseByteSize(text)).toBeNull();
  });
});

describe('formatByteSize', () => {
  it.each([
    [100 * 1024 ** 2, '100mb'],
    [1536, '1536b'],
    [2048, '2kb'],
    [1, '1b'],
  ])('%d -> %s, and back', (bytes, text) => {
    expect(formatByteSize(bytes)).toBe(text);
    expect(parseByteSize(text)).toBe(bytes);
  });
});
