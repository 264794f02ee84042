import { describe, expect, it } from 'vitest';
import { LocalQueue } from '../../../src/lock/local-queue.js';
import type { Priority } from '../../../src/lock/lock-engine.js';

interface Request {
  readonly name: string;
  readonly priority: Priority;
}

const fg = (name: string): Request => ({ name, priority: 'foreground' });
const bg = (name: string): Request => ({ name, priority: 'background' });
const names = (requests: readonly (Request | undefined)[]): (string | undefined)[] => requests.map((r) => r?.name);

describe('LocalQueue', () => {
  it('serves foreground before background, each in arrival order', () => {
    const queue = new LocalQueue<Request>();
    for (const request of [bg('b1'), fg('f1'), bg('b2'), fg('f2')]) queue.push(request);
    expect(queue.size).toBe(4);
    expect(queue.best()).toBe('foreground');
    expect(queue.ahead('foreground')).toBe(2);
    expect(queue.ahead('background')).toBe(4);
    expect(names(queue.values())).toEqual(['f1', 'f2', 'b1', 'b2']);
    expect(names([queue.peek(), queue.shift(), queue.shift(), queue.shift()])).toEqual(['f1', 'f1', 'f2', 'b1']);
    expect(queue.best()).toBe('background');
    expect(names([queue.shift(), queue.shift()])).toEqual(['b2', undefined]);
    expect(queue.size).toBe(0);
    expect(queue.best()).toBeNull();
    expect(queue.peek()).toBeUndefined();
  });

  it('is empty before its first request and takes requests again once emptied', () => {
    const queue = new LocalQueue<Request>();
    expect([queue.size, queue.best(), queue.ahead('background'), queue.shift(), queue.values(), queue.drain()]).toEqual([0, null, 0, undefined, [], []]);
    const first = bg('b1');
    queue.push(first);
    expect(queue.shift()).toBe(first);
    queue.push(bg('b2'));
    queue.push(bg('b3'));
    expect(names(queue.values())).toEqual(['b2', 'b3']);
  });

  it('removes a queued request once, and not one it never held', () => {
    const queue = new LocalQueue<Request>();
    const [f1, b1, b2] = [fg('f1'), bg('b1'), bg('b2')];
    queue.push(b1);
    queue.push(f1);
    queue.push(b2);
    expect(queue.remove(b1)).toBe(true);
    expect(queue.remove(b1)).toBe(false);
    expect(queue.remove(fg('never queued'))).toBe(false);
    expect(names(queue.values())).toEqual(['f1', 'b2']);
  });

  it('drains in service order and is empty after', () => {
    const queue = new LocalQueue<Request>();
    for (const request of [bg('b1'), fg('f1'), bg('b2')]) queue.push(request);
    expect(names(queue.drain())).toEqual(['f1', 'b1', 'b2']);
    expect(queue.size).toBe(0);
    queue.push(fg('f2'));
    expect(names(queue.values())).toEqual(['f2']);
  });
});
