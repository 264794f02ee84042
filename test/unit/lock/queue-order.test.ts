import { describe, expect, it } from 'vitest';
import { orderQueue, parseEntryName, queueFromChildren } from '../../../src/lock/queue-order.js';

const prefixes = { foreground: 'A', background: 'B' };
const names = (children: string[]): string[] => queueFromChildren(children, prefixes).map((e) => e.name);

describe('queue order', () => {
  it('parses ZooKeeper %010d sequence suffixes, including negative ones after the wrap', () => {
    expect(parseEntryName('A-0000000042')).toEqual({ name: 'A-0000000042', prefix: 'A', sequence: 42 });
    expect(parseEntryName('B--2147483648')).toMatchObject({ prefix: 'B', sequence: -2147483648 });
    expect(parseEntryName('A--000000005')).toMatchObject({ prefix: 'A', sequence: -5 });
    expect(parseEntryName('privateLock')).toBeNull();
    expect(parseEntryName('A-42')).toBeNull();
  });

  it('orders by priority prefix, then sequence, ignoring privateLock', () => {
    expect(names(['B-0000000001', 'privateLock', 'A-0000000003', 'A-0000000002', 'B-0000000000'])).toEqual([
      'A-0000000002',
      'A-0000000003',
      'B-0000000000',
      'B-0000000001',
    ]);
  });

  it('keeps arrival order across the signed 32-bit wrap, where string order breaks', () => {
    const children = ['A-2147483646', 'A--2147483648', 'A-2147483647', 'A--2147483647'];
    expect(names(children)).toEqual(['A-2147483646', 'A-2147483647', 'A--2147483648', 'A--2147483647']);
    expect([...children].sort()[0]).toBe('A--2147483647');
  });

  it('does not treat small negative and positive sequences as wrapped', () => {
    const entries = ['A--000000002', 'A-0000000001'].map((n) => parseEntryName(n)!);
    expect(orderQueue(entries, prefixes).map((e) => e.sequence)).toEqual([-2, 1]);
  });
});
