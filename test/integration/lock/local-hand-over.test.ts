import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { HeldLock, LockEngine, Priority } from '../../../src/lock/lock-engine.js';
import { lockEvents } from '../../../src/lock/lock-events.js';
import { parseNodeData } from '../../../src/lock/lock-node-data.js';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';
import { documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { EnginePool, zkSettings } from './zk-test-engines.js';

/**
 * Requests of one process pass a document's lock between them without a ZooKeeper round trip,
 * but never make another process's queued writer wait past the bound.
 */
const connect = inject('zookeeperConnect');
const pool = new EnginePool();
const HOLD_MS = 5;
let raw: RawZkConnection;

beforeAll(async () => {
  raw = await connectRawClient(connect, 4_000);
});
afterAll(() => raw?.close());
afterEach(() => pool.closeAll());

/**
 * `workers` loops of acquire → hold → release on `engine`, until `stop`. The hold (5 ms) is longer
 * than a ZooKeeper commit here, so "one round trip to hear of the other entry" is one grant.
 */
function hotLoop(engine: LockEngine, key: { index: string; id: string }, priority: Priority, workers: number, stop: { done: boolean }): Promise<void[]> {
  return Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (!stop.done) {
        const held = await engine.acquire(key, priority, { timeoutMs: 20_000, owner: owner(`hot-${w}`) });
        await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
        await held.release();
      }
    }),
  );
}

interface Grants {
  /** Grants handed over locally (no ZooKeeper round trip). */
  local: number;
  /** Grants (local or not) minus releases: 1 while a request holds the lock, 0 while none does. */
  holding: number;
}

/** An engine whose local hand-overs are counted. */
function countingEngine(settingsOverrides: Parameters<typeof zkSettings>[1], servers = connect): { engine: LockEngine; grants: Grants } {
  const grants: Grants = { local: 0, holding: 0 };
  const events = lockEvents({
    granted: (e) => {
      grants.holding++;
      if (e.handedOverLocally) grants.local++;
    },
    released: () => {
      grants.holding--;
    },
  });
  return { engine: pool.open(zkSettings(servers, settingsOverrides), { events }), grants };
}

/** Whether request `requestId` has a queue entry under `key`'s document node. */
async function hasEntry(lockRoot: string, key: { index: string; id: string }, requestId: string): Promise<boolean> {
  const docPath = documentPath(normalizeRoot(lockRoot), key);
  const children = await raw.client.getChildren(docPath).catch(() => []);
  for (const child of children) {
    if (child === 'privateLock') continue;
    const node = await raw.client.get(`${docPath}/${child}`).catch(() => null);
    if (node !== null && parseNodeData(node.data).owner?.requestId === requestId) return true;
  }
  return false;
}

/**
 * Local hand-overs `hot` makes after it has heard of `requestId`'s queue entry, until that request
 * is granted. "Heard": after the entry exists, one round trip on `hot`'s own session — ZooKeeper
 * delivers a session's watch events before the answer to any later request of that session, so
 * by then its child watch has fired (or a read armed later has answered). No clock involved.
 */
async function handOversAfterHeard(
  hot: LockEngine,
  grants: Grants,
  acquiring: Promise<HeldLock>,
  where: { readonly lockRoot: string; readonly key: { index: string; id: string }; readonly requestId: string },
): Promise<{ readonly handOvers: number; readonly waiter: HeldLock }> {
  await waitFor(() => hasEntry(where.lockRoot, where.key, where.requestId));
  await hot.inspect(where.key);
  const before = grants.local;
  const waiter = await acquiring;
  return { handOvers: grants.local - before, waiter };
}

describe('local hand-over (lock cohorting)', () => {
  it('never makes another process\'s queued foreground writer wait more than the hand-over bound', async () => {
    const maxCount = 4;
    const lockRoot = '/hand-over/count';
    const { engine: hot, grants } = countingEngine({ lockRoot, handOverMaxCount: maxCount, handOverMaxMs: 600_000 });
    const other = pool.open(zkSettings(connect, { lockRoot }));
    const key = { index: 'cohort', id: 'bound' };
    const stop = { done: false };
    const loop = hotLoop(hot, key, 'foreground', 4, stop);
    await waitFor(() => grants.local >= 20);
    const acquiring = other.acquire(key, 'foreground', { timeoutMs: 20_000, owner: owner('other') });
    const { handOvers, waiter } = await handOversAfterHeard(hot, grants, acquiring, { lockRoot, key, requestId: 'other' });
    stop.done = true;
    await waiter.release();
    await loop;
    // Once the hot process knows of the other's entry, at most `maxCount` more hand-overs.
    expect(handOvers).toBeLessThanOrEqual(maxCount);
    expect(waiter.handedOverLocally).toBe(false);
  });

  it('passes the lock on locally at most the bound times once its ZooKeeper link goes silent', async () => {
    // A silent link delivers no watch event: the queue the process last saw empty may not be any
    // more. What it passes on after its last look at the queue must stay within the bound.
    const maxCount = 4;
    const link = await TcpForwarder.start(connect);
    try {
      const { engine: hot, grants } = countingEngine({ lockRoot: '/hand-over/silent', handOverMaxCount: maxCount, handOverMaxMs: 600_000 }, link.connectString);
      const key = { index: 'cohort', id: 'silent' };
      const stop = { done: false };
      const loop = hotLoop(hot, key, 'foreground', 4, stop);
      await waitFor(() => grants.local >= 20);
      link.freeze();
      const atSilence = grants.local;
      // The lock goes back to ZooKeeper (a transaction the frozen link holds): nobody here holds it.
      await waitFor(() => grants.holding === 0);
      expect(grants.local - atSilence).toBeLessThanOrEqual(maxCount);
      stop.done = true;
      link.unfreeze();
      await loop;
    } finally {
      await link.close();
    }
  });

  it('yields to another process\'s foreground writer at once when only background requests wait here', async () => {
    const lockRoot = '/hand-over/rank';
    const { engine: hot, grants } = countingEngine({ lockRoot, handOverMaxCount: 1_000_000, handOverMaxMs: 600_000 });
    const other = pool.open(zkSettings(connect, { lockRoot }));
    const key = { index: 'cohort', id: 'rank' };
    const stop = { done: false };
    const loop = hotLoop(hot, key, 'background', 4, stop);
    await waitFor(() => grants.local >= 20);
    const acquiring = other.acquire(key, 'foreground', { timeoutMs: 20_000, owner: owner('fg') });
    const { handOvers, waiter } = await handOversAfterHeard(hot, grants, acquiring, { lockRoot, key, requestId: 'fg' });
    stop.done = true;
    await waiter.release();
    await loop;
    // Once the hot process knows a foreground writer waits elsewhere, no background hand-over.
    expect(handOvers).toBe(0);
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
