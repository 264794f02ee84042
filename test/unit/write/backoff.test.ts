import { afterEach, describe, expect, it, vi } from 'vitest';
import { backoffDelayMs, delay } from '../../../src/write/backoff.js';

describe('backoffDelayMs', () => {
  it('draws uniformly below an exponentially growing ceiling (full jitter)', () => {
    const top = (): number => 0.999_999;
    expect([0, 1, 2, 3].map((attempt) => backoffDelayMs(attempt, 100, 5_000, top))).toEqual([99, 199, 399, 799]);
    expect([0, 1, 2, 3].map((attempt) => backoffDelayMs(attempt, 100, 5_000, () => 0))).toEqual([0, 0, 0, 0]);
  });

  it('never exceeds the cap, however many attempts', () => {
    expect(backoffDelayMs(30, 100, 5_000, () => 0.999_999)).toBe(4_999);
    expect(backoffDelayMs(2_000, 100, 5_000, () => 0.5)).toBe(2_500);
  });
});

describe('delay', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves after the given time and not before', async () => {
    vi.useFakeTimers();
    let done = false;
    const waiting = delay(200).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(199);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waiting;
    expect(done).toBe(true);
  });

  it('rejects with the signal\'s reason as soon as it aborts, leaving no timer behind', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const waiting = delay(10_000, controller.signal);
    const reason = new Error('client gone');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects at once when the signal has already aborted', async () => {
    const reason = new Error('already gone');
    await expect(delay(10_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
