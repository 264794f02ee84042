import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { HeldLock, LockKey } from '../../../src/lock/lock-engine.js';
import { childrenOrEmpty } from '../../../src/zookeeper-client/zk-client.js';
import { isZkCode } from '../../../src/zookeeper-client/zk-errors.js';
import { connectRawClient } from '../../support/zk-raw-client.js';
import { documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { ZK_OP, ZkWireTap } from '../../support/zk-wire-tap.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';
import { EnginePool, makeKnown, zkSettings } from './zk-test-engines.js';

/**
 * A bulk's documents whose containers this process already knows (its single writes created and kept them)
 * are read before they are taken, but the fresh documents' transaction does not wait for those
 * reads: it goes out right behind them, and the known documents follow in a transaction of their
 * own as soon as the reads are answered.
 */
describe('batch acquisition of documents this process already knows', () => {
  const pool = new EnginePool();
  let tap: ZkWireTap;
  const settings = zkSettings(inject('zookeeperConnect'));
  const root = normalizeRoot(settings.lockRoot);

  beforeAll(async () => {
    tap = await ZkWireTap.start(inject('zookeeperConnect'));
  });

  afterAll(async () => {
    await pool.closeAll();
    await tap?.close();
  });

  /** Document nodes made by another client (under an existing index node), persistent: no reaper takes them during a test. */
  async function persistentDocuments(keys: readonly LockKey[]): Promise<void> {
    const raw = await connectRawClient(inject('zookeeperConnect'), 4_000);
    try {
      for (const key of keys) await raw.client.create(documentPath(root, key), '', 'persistent');
    } finally {
      await raw.close();
    }
  }

  async function removeDocuments(keys: readonly LockKey[]): Promise<void> {
    const raw = await connectRawClient(inject('zookeeperConnect'), 4_000);
    try {
      for (const key of keys) await raw.client.delete(documentPath(root, key), -1).catch(() => undefined);
    } finally {
      await raw.close();
    }
  }

  it('sends the fresh documents\' transaction before the reads of the known ones are answered, and grants both together', async () => {
    const engine = pool.open({ ...settings, servers: tap.connectString });
    const known = Array.from({ length: 3 }, (_, i) => ({ index: 'known-docs', id: `known-${i}` }));
    const fresh = Array.from({ length: 50 }, (_, i) => ({ index: 'known-docs', id: `fresh-${i}` }));
    // The known documents are persistent nodes (as a seed-algorithm client makes them), which the
    // server's container reaper (every second in these tests) cannot delete between the bulk's read
    // and its transaction: a reaped one is retried and granted a turn later (the next test), which
    // this one would read as grants that did not come together.
    await makeKnown(engine, [{ index: 'known-docs', id: 'own' }]); // the lock root and index exist
    await persistentDocuments(known);
    await makeKnown(engine, known);
    tap.resetCounts();
    const granted: HeldLock[] = [];
    let grantedInFirstTurn = 0;
    const onGranted = (lock: HeldLock): void => {
      // A bulk sends what was granted in one turn of the event loop as one sub-bulk.
      if (granted.length === 0) setImmediate(() => (grantedInFirstTurn = granted.length));
      granted.push(lock);
    };
    const result = await engine.acquireEach([...known, ...fresh], 'background', { timeoutMs: 5_000, owner: owner('bulk'), onGranted });
    expect(result.failed.size).toBe(0);
    expect(granted).toHaveLength(known.length + fresh.length);
    await new Promise((resolve) => setImmediate(resolve));
    expect(grantedInFirstTurn).toBe(granted.length);
    const tokenOf = (id: string): number | undefined => granted.find((lock) => lock.key.id === id)?.fencingToken;
    // One transaction for the fresh documents, one for the known ones.
    expect(new Set(fresh.map((key) => tokenOf(key.id))).size).toBe(1);
    expect(new Set(known.map((key) => tokenOf(key.id))).size).toBe(1);
    expect(tap.count(ZK_OP.multi)).toBe(2);
    expect(tap.count(ZK_OP.getChildren2)).toBe(known.length);
    // The reads and the fresh documents' transaction were outstanding together.
    expect(tap.maxOutstanding).toBeGreaterThanOrEqual(known.length + 1);
    await Promise.all(granted.map((lock) => lock.release()));
    await removeDocuments(known);
  });

  it('leaves no document lock behind when a bulk gives up while its known documents are being read', async () => {
    const engine = pool.open({ ...settings, servers: tap.connectString });
    const known = Array.from({ length: 3 }, (_, i) => ({ index: 'known-withdrawn', id: `known-${i}` }));
    await makeKnown(engine, [{ index: 'known-withdrawn', id: 'own' }]);
    await persistentDocuments(known);
    await makeKnown(engine, known);
    tap.resetCounts();
    const clientGone = new AbortController();
    // The reads of the known documents stay unanswered until the bulk has given up (its client
    // hung up, or Elasticsearch answered the first sub-bulk as a whole).
    tap.holdReplies();
    let bulk: Promise<unknown>;
    try {
      bulk = engine
        .acquireEach(known, 'background', { timeoutMs: 10_000, owner: owner('bulk'), signal: clientGone.signal, onGranted: (lock) => void lock.release() })
        .catch((error: unknown) => error);
      await waitFor(() => tap.count(ZK_OP.getChildren2) === known.length);
      clientGone.abort(new Error('client went away'));
    } finally {
      tap.releaseReplies();
    }
    await bulk;
    // The next request for those documents in this process is served: before the fix, the
    // abandoned document locks stayed in the engine, never acquiring and never leaving, and every
    // later request for those documents here waited out its timeout.
    const again = await Promise.all(known.map((key) => engine.acquire(key, 'foreground', { timeoutMs: 3_000, owner: owner('single') })));
    expect(again.every((lock) => lock.usable())).toBe(true);
    await Promise.all(again.map((lock) => lock.release()));
    for (const key of known) expect((await engine.inspect(key)).holder).toBeNull();
    await removeDocuments(known);
  });

  it.each(['released', 'yielded to a waiter of another process'] as const)('gives back a known document it took right after an operator force-released the holder before it (the version it read had moved): %s', async (how) => {
    const engine = pool.open({ ...settings, servers: tap.connectString });
    const operator = pool.open(settings);
    const index = how === 'released' ? 'known-forced' : 'known-forced-yield';
    const known = Array.from({ length: 2 }, (_, i) => ({ index, id: `known-${i}` }));
    await makeKnown(engine, [{ index, id: 'own' }]);
    await persistentDocuments(known);
    await makeKnown(engine, known);
    const granted: HeldLock[] = [];
    // The bulk reads its known documents (free, version v); their answers wait in the tap while
    // another holder takes known-0 and an operator takes it from them (version v + 1). The bulk's
    // transaction then takes known-0 for real, and its release checked version v: refused, it was
    // read as "force-released from us" and left our privateLock to the session's end.
    tap.holdReplies();
    let bulk: Promise<unknown>;
    try {
      bulk = engine.acquireEach(known, 'background', { timeoutMs: 10_000, owner: owner('bulk'), onGranted: (lock) => granted.push(lock) });
      await waitFor(() => tap.heldPieces > 0);
      const other = await operator.acquire(known[0]!, 'foreground', { timeoutMs: 2_000, owner: owner('other') });
      expect(await operator.forceRelease(known[0]!)).toBe(true);
      await other.release();
    } finally {
      tap.releaseReplies();
    }
    await bulk;
    expect(granted.map((lock) => lock.key.id).sort()).toEqual(['known-0', 'known-1']);
    if (how === 'yielded to a waiter of another process') {
      // A foreground waiter of another process queues ahead of a background one of this process:
      // the release is a yield (re-queue + give privateLock back), whose version check is refused.
      const foreign = operator.acquire(known[0]!, 'foreground', { timeoutMs: 5_000, owner: owner('foreign') });
      await waitFor(async () => (await engine.inspect(known[0]!)).queue.some((waiter) => waiter.owner?.requestId === 'foreign'));
      const local = engine.acquire(known[0]!, 'background', { timeoutMs: 5_000, owner: owner('local') });
      await waitFor(async () => (await engine.inspect(known[0]!)).queue.some((waiter) => waiter.owner?.requestId === 'local'));
      await Promise.all(granted.map((lock) => lock.release()));
      await (await foreign).release();
      await (await local).release();
    } else await Promise.all(granted.map((lock) => lock.release()));
    const raw = await connectRawClient(inject('zookeeperConnect'), 4_000);
    try {
      for (const key of known) await waitFor(async () => (await childrenOrEmpty(raw.client, documentPath(root, key))).length === 0, 5_000);
    } finally {
      await raw.close();
    }
    await removeDocuments(known);
  });

  it('takes a known document whose container was reaped since, without refusing the fresh documents\' transaction', async () => {
    const engine = pool.open(settings);
    const known = Array.from({ length: 3 }, (_, i) => ({ index: 'known-reaped', id: `known-${i}` }));
    const fresh = Array.from({ length: 20 }, (_, i) => ({ index: 'known-reaped', id: `fresh-${i}` }));
    await makeKnown(engine, known);
    // A persistent document beside them keeps the index container from being reaped too (every
    // second here): that would add a transaction refused for a reason this test is not about.
    const keeper = { index: 'known-reaped', id: 'keeps-the-index' };
    await persistentDocuments([keeper]);
    const raw = await connectRawClient(inject('zookeeperConnect'), 4_000);
    try {
      // As the server's container reaper does with an emptied document node (the harness's reaper,
      // every second, may have done it already: the same state).
      for (const key of known) await raw.client.delete(documentPath(root, key), -1).catch(unlessNoNode);
    } finally {
      await raw.close();
    }
    const before = engine.stats().zkOps.multi;
    const granted: HeldLock[] = [];
    const result = await engine.acquireEach([...known, ...fresh], 'background', { timeoutMs: 5_000, owner: owner('bulk'), onGranted: (lock) => granted.push(lock) });
    expect(result.failed.size).toBe(0);
    expect(granted).toHaveLength(known.length + fresh.length);
    expect(engine.stats().zkOps.multi - before).toBe(2);
    await Promise.all(granted.map((lock) => lock.release()));
    for (const key of known) expect((await engine.inspect(key)).holder).toBeNull();
    await removeDocuments([keeper]);
  });

  it('queues for a known document instead of taking it when its read shows an entry ahead', async () => {
    const engine = pool.open(settings);
    const known = { index: 'known-queued', id: 'doc' };
    const fresh = Array.from({ length: 5 }, (_, i) => ({ index: 'known-queued', id: `fresh-${i}` }));
    await makeKnown(engine, [{ index: 'known-queued', id: 'own' }]); // the lock root and index exist
    // Persistent, so the reaper (every second here) cannot take the document node while it is empty.
    await persistentDocuments([known]);
    await makeKnown(engine, [known]);
    const docPath = documentPath(root, known);
    const raw = await connectRawClient(inject('zookeeperConnect'), 4_000);
    try {
      // Another process's foreground request waits there (its privateLock is free for a moment).
      const foreign = await raw.client.create(`${docPath}/A-`, '', 'ephemeralSequential');
      const granted: HeldLock[] = [];
      const done = engine.acquireEach([known, ...fresh], 'background', { timeoutMs: 10_000, owner: owner('bulk'), onGranted: (lock) => granted.push(lock) });
      await waitFor(() => granted.length === fresh.length);
      // Queued behind the foreign entry, privateLock not taken.
      await waitFor(async () => (await childrenOrEmpty(raw.client, docPath)).some((child) => child.startsWith('B-')));
      expect(await childrenOrEmpty(raw.client, docPath)).not.toContain('privateLock');
      expect(granted.map((lock) => lock.key.id)).not.toContain(known.id);
      await raw.client.delete(foreign, -1);
      const result = await done;
      expect(result.failed.size).toBe(0);
      expect(granted.map((lock) => lock.key.id)).toContain(known.id);
      await Promise.all(granted.map((lock) => lock.release()));
      expect(await childrenOrEmpty(raw.client, docPath)).toEqual([]);
    } finally {
      await raw.close();
      await removeDocuments([known]);
    }
  });

  it('reads nothing but one exists per grant (the holder watch) when single acquisitions find documents another client created, and still sees a forced release', async () => {
    const engine = pool.open({ ...settings, servers: tap.connectString });
    const keys = Array.from({ length: 5 }, (_, i) => ({ index: 'known-elsewhere', id: `doc-${i}` }));
    await makeKnown(engine, [{ index: 'known-elsewhere', id: 'own' }]); // the index container is known here
    // A seed-algorithm client's persistent document nodes; this engine has never seen them.
    await persistentDocuments(keys);
    try {
      tap.resetCounts();
      // Arriving in one turn, the five go as one batch; its container creates are refused
      // (NODEEXISTS), the documents are read and taken in a second transaction.
      const held = await Promise.all(keys.map((key) => engine.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('single') })));
      // ZooKeeper answers a session's requests in order: what the grants sent went out before this.
      await engine.inspect({ index: 'known-elsewhere', id: 'unrelated' });
      expect(tap.count(ZK_OP.multi)).toBe(2);
      expect(tap.count(ZK_OP.getChildren2)).toBe(keys.length + 1);
      // The inspection's read; each single grant's holder watch is an exists (sent with the grant,
      // not awaited): privateLock's Stat without its data.
      expect(tap.count(ZK_OP.getData)).toBe(1);
      expect(tap.count(ZK_OP.exists)).toBe(keys.length);
      expect(held.every((lock) => lock.usable())).toBe(true);
      // The forced-release epoch's watch tells this process; it verifies the locks older than the
      // forced release and loses only the one taken.
      const other = pool.open(settings);
      expect(await other.forceRelease(keys[0]!)).toBe(true);
      await waitFor(() => held[0]!.lost.aborted);
      await engine.inspect({ index: 'known-elsewhere', id: 'unrelated' });
      expect(held.slice(1).every((lock) => lock.usable())).toBe(true);
      await Promise.all(held.map((lock) => lock.release()));
    } finally {
      await removeDocuments(keys);
    }
  });
});

function unlessNoNode(error: unknown): void {
  if (!isZkCode(error, 'NONODE')) throw error;
}
