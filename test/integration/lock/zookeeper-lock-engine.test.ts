import { afterEach, describe, expect, inject, it } from 'vitest';
import type { HeldLock } from '../../../src/lock/lock-engine.js';
import { LockTimeoutError } from '../../../src/lock/lock-errors.js';
import { childrenOrEmpty } from '../../../src/zookeeper-client/zk-client.js';
import { connectRawClient } from '../../support/zk-raw-client.js';
import { documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { owner, runLockEngineSuite, waitFor } from '../../unit/lock/lock-engine-suite.js';
import { EnginePool, zkSettings } from './zk-test-engines.js';
import { SeedAlgorithmClient } from './seed-algorithm-client.js';

const connect = inject('zookeeperConnect');
const pool = new EnginePool();
let counter = 0;

afterEach(() => pool.closeAll());

runLockEngineSuite({
  name: 'ZooKeeper, one session per engine',
  async engines(count) {
    const settings = zkSettings(connect, { lockRoot: '/es-lock-proxy-test/suite' });
    return Array.from({ length: count }, () => pool.open(settings));
  },
  index: () => `suite-${process.pid}-${++counter}`,
});

describe('ZooKeeper engine specifics', () => {
  it('lays out {root}/{index}/{encoded id} with privateLock and A-/B- queue entries', async () => {
    const settings = zkSettings(connect);
    const [a, b] = [pool.open(settings), pool.open(settings)];
    const key = { index: 'products', id: 'a/b ..' };
    const raw = await connectRawClient(connect, 4_000);
    try {
      const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('h') });
      const waiting = b.acquire(key, 'background', { timeoutMs: 5_000, owner: owner('w') });
      const docPath = `${normalizeRoot(settings.lockRoot)}/products/a%2Fb%20%2E%2E`;
      expect(documentPath(normalizeRoot(settings.lockRoot), key)).toBe(docPath);
      await waitFor(async () => (await raw.client.getChildren(docPath)).length === 2);
      const children = await raw.client.getChildren(docPath);
      expect(children.sort()).toEqual([expect.stringMatching(/^B-\d{10}$/), 'privateLock']);
      await held.release();
      await (await waiting).release();
      expect(await childrenOrEmpty(raw.client, docPath)).toEqual([]);
    } finally {
      await raw.close();
    }
  });

  it('takes a bulk\'s free keys in one batch and its contended keys as their holders release them', async () => {
    const settings = zkSettings(connect);
    const [holder, bulk] = [pool.open(settings), pool.open(settings)];
    const keys = Array.from({ length: 10 }, (_, i) => ({ index: 'batch', id: `doc-${i}` }));
    const held = await Promise.all(keys.slice(0, 3).map((key) => holder.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('h') })));
    const granted: HeldLock[] = [];
    const done = bulk.acquireEach(keys, 'background', { timeoutMs: 10_000, owner: owner('bulk'), onGranted: (lock) => granted.push(lock) });
    await waitFor(() => granted.length === 7);
    expect(granted.map((lock) => lock.key.id).sort()).toEqual(keys.slice(3).map((key) => key.id).sort());
    // One batch transaction: every free key stands on the same privateLock czxid.
    expect(new Set(granted.map((lock) => lock.fencingToken)).size).toBe(1);
    await Promise.all(held.map((lock) => lock.release()));
    const result = await done;
    expect(result.failed.size).toBe(0);
    expect(granted).toHaveLength(10);
    await Promise.all(granted.map((lock) => lock.release()));
    for (const key of keys) expect((await holder.inspect(key)).holder).toBeNull();
  });

  it('sends a release not yet gone out together with the next acquisition of that document (one transaction, a fresh grant)', async () => {
    const settings = zkSettings(connect);
    const [engine, other] = [pool.open(settings), pool.open(settings)];
    const key = { index: 'fusion', id: 'warm' };
    await (await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('warm') })).release();
    const first = await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('first') });
    // Answered after the holder watch's first read (one session answers in order): the watch vouches
    // for privateLock, as it does after a write's round trip to the cluster. Before that, a release
    // waits for the read and goes out on its own.
    await engine.inspect(key);
    const before = engine.stats().zkOps;
    const released = first.release();
    const second = await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('second') });
    await released;
    const after = engine.stats().zkOps;
    expect(after.multi - before.multi).toBe(1);
    expect(second.handedOverLocally).toBe(false);
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);
    expect((await other.inspect(key)).holder?.owner.requestId).toBe('second');
    await second.release();
    expect((await other.inspect(key)).holder).toBeNull();
  });

  it('moves its entry back to background rank when its only foreground request gives up, so a later foreground writer elsewhere goes first', async () => {
    const settings = zkSettings(connect);
    const [holderEngine, p, r] = [pool.open(settings), pool.open(settings), pool.open(settings)];
    const key = { index: 'rerank', id: 'down' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    const raw = await connectRawClient(connect, 4_000);
    try {
      const entries = async (prefix: string): Promise<number> => (await childrenOrEmpty(raw.client, docPath)).filter((c) => c.startsWith(prefix)).length;
      const held = await holderEngine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('holder') });
      const granted: string[] = [];
      const background = p.acquire(key, 'background', { timeoutMs: 10_000, owner: owner('p-bg') }).then((lock) => (granted.push('p-bg'), lock));
      await waitFor(async () => (await entries('B-')) === 1);
      // P's foreground request moves P's entry up, then gives up (its timeout).
      const givingUp = p.acquire(key, 'foreground', { timeoutMs: 1_000, owner: owner('p-fg') });
      await waitFor(async () => (await entries('A-')) === 1 && (await entries('B-')) === 0);
      await expect(givingUp).rejects.toBeInstanceOf(LockTimeoutError);
      // What P has left waits at background rank again: R's later foreground entry is ahead of it.
      await waitFor(async () => (await entries('A-')) === 0 && (await entries('B-')) === 1);
      const foreground = r.acquire(key, 'foreground', { timeoutMs: 10_000, owner: owner('r-fg') }).then((lock) => (granted.push('r-fg'), lock));
      await waitFor(async () => (await entries('A-')) === 1);
      await held.release();
      await (await foreground).release();
      await (await background).release();
      expect(granted).toEqual(['r-fg', 'p-bg']);
    } finally {
      await raw.close();
    }
  });

  it('shows this process\'s local holder and local waiters in inspect', async () => {
    const engine = pool.open(zkSettings(connect));
    const key = { index: 'cohort', id: 'inspect' };
    const held = await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('first'), message: 'PUT 1' });
    const waiting = engine.acquire(key, 'background', { timeoutMs: 5_000, owner: owner('second'), message: 'PUT 2' });
    await waitFor(async () => (await engine.inspect(key)).queue.length === 1);
    const inspection = await engine.inspect(key);
    expect(inspection.holder).toMatchObject({ owner: owner('first'), message: 'PUT 1' });
    expect(inspection.queue).toEqual([{ priority: 'background', owner: owner('second'), entry: 'local' }]);
    await held.release();
    const second = await waiting;
    expect(second.handedOverLocally).toBe(true);
    expect((await engine.inspect(key)).holder).toMatchObject({ owner: owner('second'), message: 'PUT 2' });
    await second.release();
  });

  it('mutually excludes with a client following the original document on the same znodes', async () => {
    // As docs/guarantees.md says to run next to such clients: our releases do not delete the document
    // node, which a seed client may have just found and be about to queue under (NONODE).
    const settings = zkSettings(connect, { sessionTimeoutMs: 4_000, documentCleanup: 'reaper' });
    const engines = [pool.open(settings), pool.open(settings)];
    const key = { index: 'seed', id: 'doc-1' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    const seeds = await Promise.all([0, 1].map(() => connectRawClient(connect, 4_000)));
    let inside = 0;
    let overlaps = 0;
    const critical = async (): Promise<void> => {
      inside++;
      if (inside > 1) overlaps++;
      await new Promise((resolve) => setTimeout(resolve, 1));
      inside--;
    };
    try {
      const engineWorkers = engines.map(async (engine, n) => {
        for (let i = 0; i < 10; i++) {
          const held = await engine.acquire(key, i % 2 === 0 ? 'foreground' : 'background', { timeoutMs: 20_000, owner: owner(`e${n}`) });
          await critical();
          await held.release();
        }
      });
      const seedWorkers = seeds.map(async (raw, n) => {
        const seed = new SeedAlgorithmClient(raw.client, docPath, n === 0 ? 'A' : 'B');
        for (let i = 0; i < 10; i++) {
          const node = await seed.lock();
          await critical();
          await seed.unlock(node);
        }
      });
      await Promise.all([...engineWorkers, ...seedWorkers]);
      expect(overlaps).toBe(0);
      expect(await childrenOrEmpty(seeds[0]!.client, docPath)).toEqual([]);
    } finally {
      await Promise.all(seeds.map((s) => s.close()));
    }
  });

  it('a waiter times out without leaving its entry even when the holder is a seed client', async () => {
    const settings = zkSettings(connect);
    const engine = pool.open(settings);
    const key = { index: 'seed', id: 'doc-2' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    const raw = await connectRawClient(connect, 4_000);
    try {
      const seed = new SeedAlgorithmClient(raw.client, docPath, 'B');
      const node = await seed.lock();
      await expect(engine.acquire(key, 'foreground', { timeoutMs: 150, owner: owner('x') })).rejects.toBeInstanceOf(LockTimeoutError);
      expect((await raw.client.getChildren(docPath)).sort()).toEqual([node, 'privateLock']);
      const inspection = await engine.inspect(key);
      expect(inspection.holder).not.toBeNull();
      expect(inspection.queue).toEqual([]);
      await seed.unlock(node);
    } finally {
      await raw.close();
    }
  });
});
