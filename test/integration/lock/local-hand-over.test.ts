import { afterEach, describe, expect, inject, it } from 'vitest';
import type { LockEngine, Priority } from '../../../src/lock/lock-engine.js';
import { lockEvents } from '../../../src/lock/lock-events.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';
import { EnginePool, zkSettings } from './zk-test-engines.js';

/**
 * Issue #11 item 1: requests of one process pass a document's lock between them without a
 * ZooKeeper round trip, but never make another process's queued writer wait past the bound.
 */
const connect = inject('zookeeperConnect');
const pool = new EnginePool();

afterEach(() => pool.closeAll());

/** `workers` loops of acquire → one turn of the event loop → release on `engine`, until `stop`. */
function hotLoop(engine: LockEngine, key: { index: string; id: string }, priority: Priority, workers: number, stop: { done: boolean }): Promise<void[]> {
  return Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (!stop.done) {
        const held = await engine.acquire(key, priority, { timeoutMs: 20_000, owner: owner(`hot-${w}`) });
        await new Promise((resolve) => setImmediate(resolve));
        await held.release();
      }
    }),
  );
}

/** An engine whose grants are counted: total, and local hand-overs. */
function countingEngine(settingsOverrides: Parameters<typeof zkSettings>[1]): { engine: LockEngine; grants: { total: number; local: number } } {
  const grants = { total: 0, local: 0 };
  const events = lockEvents({
    granted: (e) => {
      grants.total++;
      if (e.handedOverLocally) grants.local++;
    },
  });
  return { engine: pool.open(zkSettings(connect, settingsOverrides), { events }), grants };
}

describe('local hand-over (lock cohorting)', () => {
  it('never makes another process\'s queued foreground writer wait more than the hand-over bound', async () => {
    const maxCount = 4;
    const { engine: hot, grants } = countingEngine({ lockRoot: '/hand-over/count', handOverMaxCount: maxCount, handOverMaxMs: 600_000 });
    const other = pool.open(zkSettings(connect, { lockRoot: '/hand-over/count' }));
    const key = { index: 'cohort', id: 'bound' };
    const stop = { done: false };
    const loop = hotLoop(hot, key, 'foreground', 4, stop);
    await waitFor(() => grants.local >= 50);
    const before = grants.total;
    const waiter = await other.acquire(key, 'foreground', { timeoutMs: 20_000, owner: owner('other') });
    const duringWait = grants.total - before;
    stop.done = true;
    await waiter.release();
    await loop;
    // The holder when the other process queued, then at most `maxCount` hand-overs (plus one
    // for the round trip in which the other process's entry was on its way).
    expect(duringWait).toBeLessThanOrEqual(maxCount + 2);
    expect(waiter.handedOverLocally).toBe(false);
  });

  it('yields to another process\'s foreground writer at once when only background requests wait here', async () => {
    const { engine: hot, grants } = countingEngine({ lockRoot: '/hand-over/rank', handOverMaxCount: 1_000_000, handOverMaxMs: 600_000 });
    const other = pool.open(zkSettings(connect, { lockRoot: '/hand-over/rank' }));
    const key = { index: 'cohort', id: 'rank' };
    const stop = { done: false };
    const loop = hotLoop(hot, key, 'background', 4, stop);
    await waitFor(() => grants.local >= 50);
    const before = grants.total;
    const waiter = await other.acquire(key, 'foreground', { timeoutMs: 20_000, owner: owner('fg') });
    const duringWait = grants.total - before;
    stop.done = true;
    await waiter.release();
    await loop;
    expect(duringWait).toBeLessThanOrEqual(2);
  });

  it('serves a queued foreground request of this process before its background ones', async () => {
    const engine = pool.open(zkSettings(connect));
    const key = { index: 'cohort', id: 'local-priority' };
    const held = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('holder') });
    const order: string[] = [];
    const bg = engine.acquire(key, 'background', { timeoutMs: 5_000, owner: owner('bg') }).then((lock) => (order.push('bg'), lock));
    const fg = engine.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('fg') }).then((lock) => (order.push('fg'), lock));
    await held.release();
    await (await fg).release();
    await (await bg).release();
    expect(order).toEqual(['fg', 'bg']);
  });

  it('never hands a lost lock over: the next local request gets a fresh grant', async () => {
    const settings = zkSettings(connect);
    const [engine, operator] = [pool.open(settings), pool.open(settings)];
    const key = { index: 'cohort', id: 'lost' };
    const held = await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('first') });
    const waiting = engine.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('second') });
    expect(await operator.forceRelease(key)).toBe(true);
    await waitFor(() => held.lost.aborted);
    await held.release();
    const next = await waiting;
    expect(next.handedOverLocally).toBe(false);
    expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
    expect(next.usable()).toBe(true);
    await next.release();
  });
});
