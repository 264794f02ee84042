import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { HeldLock, LockKey } from '../../../src/lock/lock-engine.js';
import type { ZooKeeperLockEngine } from '../../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { MAX_KEYS_PER_TXN } from '../../../src/lock/zookeeper/queue/batch-acquire.js';
import { childrenOrEmpty } from '../../../src/zookeeper-client/zk-client.js';
import { connectRawClient } from '../../support/zk-raw-client.js';
import { documentPath, indexPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { lastZxid, startZooKeeper, type ZooKeeperCluster } from '../../support/zookeeper-server.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';
import { lockEvents } from '../../../src/lock/lock-events.js';
import { EnginePool, zkSettings } from './zk-test-engines.js';

/**
 * Issue #11 items 3–4: a bulk's uncontended keys cost one transaction to take and one to give
 * back, counted by the server itself (its zxid), on a ZooKeeper of its own so that no other test
 * adds transactions in between.
 */
describe('batch acquisition cost', () => {
  let zk: ZooKeeperCluster;
  const pool = new EnginePool();
  let port: number;

  beforeAll(async () => {
    // No reaper within a test: what is left under an index is what the releases left.
    zk = await startZooKeeper(1, { systemProperties: { 'znode.container.checkIntervalMs': '600000' } });
    port = zk.nodes[0]!.clientPort;
  }, 60_000);

  afterAll(async () => {
    await pool.closeAll();
    await zk?.stop();
  });

  /** Warms `engine` on `index` (its session, the lock root and the index container exist), then names `count` new keys there. */
  async function freshKeys(engine: ZooKeeperLockEngine, index: string, count: number): Promise<LockKey[]> {
    await (await engine.acquire({ index, id: 'warm' }, 'foreground', { timeoutMs: 5_000, owner: owner('warm') })).release();
    return Array.from({ length: count }, (_, i) => ({ index, id: `fresh-${i}` }));
  }

  /** The document nodes under `index` now (no reaper runs within a test here: what the releases left). */
  async function documentsUnder(lockRoot: string, index: string): Promise<string[]> {
    const raw = await connectRawClient(zk.connectString, 4_000);
    try {
      return await raw.client.getChildren(indexPath(normalizeRoot(lockRoot), index));
    } finally {
      await raw.close();
    }
  }

  /** Single writes of one event-loop turn, as a busy proxy sees them. */
  function lockEach(engine: ZooKeeperLockEngine, keys: readonly LockKey[]): Promise<HeldLock[]> {
    return Promise.all(keys.map((key) => engine.acquire(key, 'foreground', { timeoutMs: 10_000, owner: owner(key.id) })));
  }

  it('takes and releases 1,000 fresh keys with at most 0.1 ZooKeeper transactions per key', async () => {
    const engine = pool.open(zkSettings(zk.connectString));
    // Warm: the session, the lock root and the index container exist.
    await (await engine.acquire({ index: 'bulk', id: 'warm' }, 'background', { timeoutMs: 5_000, owner: owner('warm') })).release();
    const keys = Array.from({ length: 1_000 }, (_, i) => ({ index: 'bulk', id: `fresh-${i}` }));
    const before = await lastZxid(port);
    const granted: HeldLock[] = [];
    const result = await engine.acquireEach(keys, 'background', { timeoutMs: 10_000, owner: owner('bulk'), onGranted: (lock) => granted.push(lock) });
    expect(result.failed.size).toBe(0);
    await Promise.all(granted.map((lock) => lock.release()));
    const transactions = Number((await lastZxid(port)) - before);
    console.log(`batch-cost: 1,000 fresh keys taken and released in ${transactions} ZooKeeper transactions`);
    expect(granted).toHaveLength(1_000);
    expect(transactions / keys.length).toBeLessThanOrEqual(0.1);
  });

  it('takes fresh single documents in one transaction, releases them in another, and leaves no container behind', async () => {
    const settings = zkSettings(zk.connectString);
    const engine = pool.open(settings);
    const keys = await freshKeys(engine, 'singles', 200);
    const before = await lastZxid(port);
    const locks = await lockEach(engine, keys);
    await Promise.all(locks.map((lock) => lock.release()));
    const transactions = Number((await lastZxid(port)) - before);
    expect(await documentsUnder(settings.lockRoot, 'singles')).toEqual([]);
    expect(transactions).toBeLessThanOrEqual(2);
  });

  it('leaves the document nodes it created to the reaper with zookeeper.lock.document.cleanup=reaper', async () => {
    const settings = zkSettings(zk.connectString, { documentCleanup: 'reaper' });
    const engine = pool.open(settings);
    const keys = await freshKeys(engine, 'singles-reaper', 20);
    const bulkKeys = Array.from({ length: 20 }, (_, i) => ({ index: 'singles-reaper', id: `bulk-${i}` }));
    const granted: HeldLock[] = [];
    await engine.acquireEach(bulkKeys, 'background', { timeoutMs: 10_000, owner: owner('bulk'), onGranted: (lock) => granted.push(lock) });
    await Promise.all([...(await lockEach(engine, keys)), ...granted].map((lock) => lock.release()));
    expect((await documentsUnder(settings.lockRoot, 'singles-reaper')).sort()).toEqual(['warm', ...keys.map((key) => key.id), ...bulkKeys.map((key) => key.id)].sort());
  });

  it('leaves a document it created to the reaper once it yielded it to another process and took it back', async () => {
    // No local hand-over while the other process waits: the lock yields at once.
    const settings = zkSettings(zk.connectString, { handOverMaxCount: 0 });
    const [engine, other] = [pool.open(settings), pool.open(settings)];
    const [key] = await freshKeys(engine, 'yielded', 1);
    const first = await engine.acquire(key!, 'foreground', { timeoutMs: 10_000, owner: owner('first') });
    const second = engine.acquire(key!, 'foreground', { timeoutMs: 10_000, owner: owner('second') });
    const others = other.acquire(key!, 'foreground', { timeoutMs: 10_000, owner: owner('other') });
    await waitFor(async () => (await engine.inspect(key!)).queue.length === 2);
    await first.release();
    await (await others).release();
    await (await second).release();
    expect(await documentsUnder(settings.lockRoot, 'yielded')).toEqual([key!.id]);
  });

  it('keeps the one document another process queued under and releases the others in one more transaction, not one each', async () => {
    const settings = zkSettings(zk.connectString);
    const [engine, other] = [pool.open(settings), pool.open(settings)];
    const keys = await freshKeys(engine, 'singles-queued', 20);
    const locks = await lockEach(engine, keys);
    const queued = keys[7]!;
    const waiting = other.acquire(queued, 'foreground', { timeoutMs: 10_000, owner: owner('other') });
    await waitFor(async () => (await engine.inspect(queued)).queue.length === 1);
    const before = engine.stats().zkOps.multi;
    await Promise.all(locks.map((lock) => lock.release()));
    const releaseTransactions = engine.stats().zkOps.multi - before;
    const next = await waiting;
    expect(await documentsUnder(settings.lockRoot, 'singles-queued')).toEqual([queued.id]);
    // Refused by the queued document's delete (NOTEMPTY), then the same releases without it.
    expect(releaseTransactions).toBe(2);
    await next.release();
  });

  it('keeps every document of a release batch after two refusals by documents others queued under, and remembers those it keeps', async () => {
    const settings = zkSettings(zk.connectString);
    const [engine, other] = [pool.open(settings), pool.open(settings)];
    const keys = await freshKeys(engine, 'singles-many-queued', 20);
    const locks = await lockEach(engine, keys);
    const queued = [keys[3]!, keys[7]!, keys[11]!, keys[15]!];
    const waiting = queued.map((key) => other.acquire(key, 'foreground', { timeoutMs: 10_000, owner: owner(`other-${key.id}`) }));
    await waitFor(async () => (await Promise.all(queued.map((key) => engine.inspect(key)))).every((inspection) => inspection.queue.length === 1));
    const before = engine.stats().zkOps.multi;
    await Promise.all(locks.map((lock) => lock.release()));
    // Refused by the first queued document, then by the second; the third try keeps them all.
    expect(engine.stats().zkOps.multi - before).toBe(3);
    const held = await Promise.all(waiting);
    // A document kept is one this process knows: its next lock here starts with the fast path
    // (privateLock and the document's bump: one transaction of two operations), not with the
    // transaction that creates a document it does not know (and, refused, a second one).
    const docPath = documentPath(normalizeRoot(settings.lockRoot), queued[0]!);
    const raw = await connectRawClient(zk.connectString, 4_000);
    try {
      const beforeAgain = engine.stats().zkOps;
      const again = engine.acquire(queued[0]!, 'foreground', { timeoutMs: 10_000, owner: owner('again') });
      await waitFor(async () => (await childrenOrEmpty(raw.client, docPath)).filter((child) => child.startsWith('A-')).length === 2);
      expect(engine.stats().zkOps.multi - beforeAgain.multi).toBe(1);
      expect(engine.stats().zkOps.multiOps - beforeAgain.multiOps).toBe(2);
      await Promise.all(held.map((lock) => lock.release()));
      await (await again).release();
    } finally {
      await raw.close();
    }
  });

  it('sends the releases made while one of its release transactions is on its way together, once it is answered', async () => {
    const settings = zkSettings(zk.connectString);
    const engine = pool.open(settings);
    const keys = await freshKeys(engine, 'paced', 20);
    const locks = await lockEach(engine, keys);
    // A read on the same session answers after every holder watch's first read: the watches vouch
    // for their nodes, as they do after a write's round trip to the cluster.
    await engine.inspect(keys[0]!);
    const before = engine.stats().zkOps.multi;
    // One release per event-loop turn, as a proxy's answers come back: each turn used to send its own.
    const released: Promise<void>[] = [];
    for (const lock of locks) {
      released.push(lock.release());
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(released);
    const transactions = engine.stats().zkOps.multi - before;
    console.log(`batch-cost: 20 releases, one per turn, in ${transactions} transactions`);
    expect(transactions).toBeLessThanOrEqual(5);
    expect(await documentsUnder(settings.lockRoot, 'paced')).toEqual([]);
  });

  it('sends a release another process may wait for at once, without waiting for its release transactions on their way', async () => {
    const link = await TcpForwarder.start(zk.connectString);
    const raw = await connectRawClient(zk.connectString, 4_000);
    try {
      const settings = zkSettings(link.connectString, { sessionTimeoutMs: 10_000 });
      const [engine, other] = [pool.open(settings), pool.open({ ...settings, servers: zk.connectString })];
      const root = normalizeRoot(settings.lockRoot);
      const [calm] = await freshKeys(engine, 'paced-contended', 1);
      const hot = { index: 'paced-contended', id: 'hot' };
      const entriesUnderHot = async (): Promise<number> => (await childrenOrEmpty(raw.client, documentPath(root, hot))).filter((child) => child.startsWith('A-')).length;
      // The other process holds the hot document and this one queues for it.
      const othersFirst = await other.acquire(hot, 'foreground', { timeoutMs: 10_000, owner: owner('other-1') });
      const ours = engine.acquire(hot, 'foreground', { timeoutMs: 10_000, owner: owner('ours') });
      await vi.waitFor(async () => expect(await entriesUnderHot()).toBe(1));
      await othersFirst.release();
      const hotLock = await ours;
      const [calmLock] = await lockEach(engine, [calm!]);
      const othersNext = other.acquire(hot, 'foreground', { timeoutMs: 10_000, owner: owner('other-2') });
      await vi.waitFor(async () => expect(await entriesUnderHot()).toBe(2));
      // The calm document's release goes out and its answer is held back: it stays on its way.
      link.holdReplies();
      const calmReleased = calmLock!.release();
      await vi.waitFor(async () => expect(await childrenOrEmpty(raw.client, documentPath(root, calm!))).not.toContain('privateLock'));
      const hotReleased = hotLock.release();
      const granted = await Promise.race([othersNext, new Promise<null>((resolve) => setTimeout(() => resolve(null), 3_000))]);
      expect(granted, 'the other process got the hot document while our earlier release was unanswered').not.toBeNull();
      link.passReplies();
      await Promise.all([calmReleased, hotReleased, granted?.release()]);
    } finally {
      await raw.close();
      await link.close();
    }
  });

  it('sends a release another process waits for before the event loop turns again', async () => {
    const settings = zkSettings(zk.connectString);
    const [engine, other] = [pool.open(settings), pool.open(settings)];
    const hot = { index: 'release-turn', id: 'hot' };
    const raw = await connectRawClient(zk.connectString, 4_000);
    const docPath = documentPath(normalizeRoot(settings.lockRoot), hot);
    const entriesQueued = async (count: number): Promise<void> =>
      vi.waitFor(async () => expect((await childrenOrEmpty(raw.client, docPath)).filter((child) => child.startsWith('A-'))).toHaveLength(count));
    let held: HeldLock;
    let waiting: Promise<HeldLock>;
    try {
      // Taken through the queue, so this process knows the document is contended.
      const othersFirst = await other.acquire(hot, 'foreground', { timeoutMs: 10_000, owner: owner('other-1') });
      const ours = engine.acquire(hot, 'foreground', { timeoutMs: 10_000, owner: owner('ours') });
      await entriesQueued(1);
      await othersFirst.release();
      held = await ours;
      waiting = other.acquire(hot, 'foreground', { timeoutMs: 10_000, owner: owner('other-2') });
      await entriesQueued(2);
    } finally {
      await raw.close();
    }
    const before = engine.stats().zkOps.multi;
    // Scheduled before the release: it runs at the event loop's next turn, ahead of anything the release schedules for that turn.
    const sentByNextTurn = new Promise<number>((resolve) => setImmediate(() => resolve(engine.stats().zkOps.multi - before)));
    const released = held.release();
    expect(await sentByNextTurn, 'the release transaction went out before the next turn').toBe(1);
    await released;
    const theirs = await waiting;
    expect(theirs.fencingToken).toBeGreaterThan(held.fencingToken);
    await theirs.release();
  });

  it('stays one transaction when the index container was reaped since this process last saw it', async () => {
    const settings = zkSettings(zk.connectString);
    const engine = pool.open(settings);
    let granted: HeldLock[] = [];
    const request = (id: string) => ({ timeoutMs: 10_000, owner: owner(id), onGranted: (lock: HeldLock) => granted.push(lock) });
    const first = Array.from({ length: 200 }, (_, i) => ({ index: 'reaped-index', id: `first-${i}` }));
    await engine.acquireEach(first, 'background', request('first'));
    await Promise.all(granted.map((lock) => lock.release()));
    // The releases deleted their document containers; the emptied index container goes as the
    // server's reaper would take it (every 60 s by default), while this process still believes in it.
    const raw = await connectRawClient(zk.connectString, 4_000);
    try {
      await raw.client.delete(indexPath(normalizeRoot(settings.lockRoot), 'reaped-index'), -1);
    } finally {
      await raw.close();
    }
    granted = [];
    const before = engine.stats().zkOps;
    const second = Array.from({ length: 200 }, (_, i) => ({ index: 'reaped-index', id: `second-${i}` }));
    const result = await engine.acquireEach(second, 'background', request('second'));
    expect(result.failed.size).toBe(0);
    expect(granted).toHaveLength(200);
    await Promise.all(granted.map((lock) => lock.release()));
    const after = engine.stats().zkOps;
    // The refused transaction, the one with the index container in it, the release: never a read
    // or a create per key.
    expect(after.getChildren - before.getChildren).toBe(0);
    expect(after.create - before.create).toBe(0);
    expect(after.multi - before.multi).toBeLessThanOrEqual(3);
  });

  /** Four bulks of 500 new keys on `index` at once, as four streams send them: two chunks of each in flight. */
  async function fourBulks(engine: ZooKeeperLockEngine, index: string, round: string): Promise<HeldLock[]> {
    const granted: HeldLock[] = [];
    const bulks = Array.from({ length: 4 }, (_, b) => Array.from({ length: 500 }, (_, i) => ({ index, id: `${round}-${b}-${i}` })));
    const results = await Promise.all(
      bulks.map((keys, b) => engine.acquireEach(keys, 'background', { timeoutMs: 10_000, owner: owner(`bulk-${b}`), onGranted: (lock) => granted.push(lock) })),
    );
    expect(results.every((result) => result.failed.size === 0)).toBe(true);
    return granted;
  }

  function countingRefusals(settings: ReturnType<typeof zkSettings>): { engine: ZooKeeperLockEngine; refused: string[] } {
    const refused: string[] = [];
    return { engine: pool.open(settings, { events: lockEvents({ batchRefused: ({ code }) => refused.push(code) }) }), refused };
  }

  it('creates a new index container in one transaction for every chunk that meets it at the same time, and none is refused', async () => {
    const settings = zkSettings(zk.connectString);
    const { engine, refused } = countingRefusals(settings);
    await freshKeys(engine, 'first-contact-warm', 0);
    const before = engine.stats().zkOps;
    const granted = await fourBulks(engine, 'first-contact', 'first');
    const after = engine.stats().zkOps;
    expect(granted).toHaveLength(2_000);
    expect(await documentsUnder(settings.lockRoot, 'first-contact')).toHaveLength(2_000);
    // One chunk's transaction creates the index container, the others wait for its answer: each
    // chunk's used to carry the create, one committed and the seven others were refused (NODEEXISTS).
    expect(refused).toEqual([]);
    expect(after.multi - before.multi).toBe(8);
    expect(after.create - before.create).toBe(0);
    await Promise.all(granted.map((lock) => lock.release()));
    expect(await documentsUnder(settings.lockRoot, 'first-contact')).toEqual([]);
  });

  it('creates a reaped index container again in one transaction for every chunk refused on it at the same time', async () => {
    const settings = zkSettings(zk.connectString);
    const { engine, refused } = countingRefusals(settings);
    await Promise.all((await fourBulks(engine, 'reaped-by-many', 'first')).map((lock) => lock.release()));
    // The emptied index container goes as the server's reaper would take it, while this process still believes in it.
    const raw = await connectRawClient(zk.connectString, 4_000);
    try {
      await raw.client.delete(indexPath(normalizeRoot(settings.lockRoot), 'reaped-by-many'), -1);
    } finally {
      await raw.close();
    }
    refused.length = 0;
    const before = engine.stats().zkOps;
    const granted = await fourBulks(engine, 'reaped-by-many', 'second');
    const after = engine.stats().zkOps;
    expect(granted).toHaveLength(2_000);
    expect(await documentsUnder(settings.lockRoot, 'reaped-by-many')).toHaveLength(2_000);
    // Every chunk in flight is refused once at its first document container; the retries used to
    // race to create the index container in their transactions, and all but one were refused again.
    expect(refused.length).toBeLessThanOrEqual(8);
    expect(refused.every((code) => code === 'NONODE')).toBe(true);
    expect(after.multi - before.multi).toBe(8 + refused.length);
    expect(after.create - before.create).toBe(0);
    await Promise.all(granted.map((lock) => lock.release()));
  });
});

describe('bounded work per request', () => {
  const pool = new EnginePool();
  afterAll(() => pool.closeAll());

  it('keeps at most a few transactions of one acquireEach in flight, however many keys it has', async () => {
    const link = await TcpForwarder.start(inject('zookeeperConnect'));
    try {
      const engine = pool.open(zkSettings(link.connectString));
      const keys = Array.from({ length: 6 * MAX_KEYS_PER_TXN }, (_, i) => ({ index: 'bounded', id: `k-${i}` }));
      const granted: HeldLock[] = [];
      const result = await engine.acquireEach(keys, 'background', { timeoutMs: 30_000, owner: owner('big'), onGranted: (lock) => granted.push(lock) });
      expect(result.failed.size).toBe(0);
      expect(granted).toHaveLength(keys.length);
      await Promise.all(granted.map((lock) => lock.release()));
      // Six chunks, two at a time (plus a root check): never the 6,000 requests of one per key.
      expect(link.peakOutstanding).toBeLessThanOrEqual(4);
    } finally {
      await link.close();
    }
  });
});
