import { describe, expect, it } from 'vitest';
import type { HeldLock, LockKey } from '../../../src/lock/lock-engine.js';
import type { ZooKeeperLockEngine } from '../../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { LockUnavailableError } from '../../../src/lock/lock-errors.js';
import { ZK_RC, isZkCode } from '../../../src/zookeeper-client/zk-errors.js';
import { childrenOrEmpty } from '../../../src/zookeeper-client/zk-client.js';
import { PRIVATE_LOCK, documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { ZK_OPCODE } from '../../support/zookeeper-frames.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';
import { makeKnown, useLockFixture, zkSettings } from './zk-test-engines.js';

/**
 * A release or step-back may delete only the node its own acquisition created, never another holder's.
 * Engine A talks to ZooKeeper through a forwarder that can hold its bytes or lose one reply; the
 * other engines and a raw client (playing a client of the original algorithm) are connected
 * directly.
 */
const fixture = useLockFixture();
const { connect, pool, privateLockOwner } = fixture;

/** Engine A behind a forwarder, engine B connected directly, and one document of the test's. */
async function behindForwarder(id: string): Promise<{ link: TcpForwarder; a: ZooKeeperLockEngine; b: ZooKeeperLockEngine; key: LockKey; docPath: string }> {
  const settings = zkSettings(connect);
  const link = await fixture.link();
  const key = { index: 'hole3', id };
  return { link, a: pool.open({ ...settings, servers: link.connectString }), b: pool.open(settings), key, docPath: documentPath(normalizeRoot(settings.lockRoot), key) };
}

/** Lets the engine hand its pending requests to the socket. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Each waiter gets the lock and releases it; once both engines' sessions have answered everything
 * before an inspection, nobody holds `privateLock` of `docPath` any more.
 */
async function expectEveryWaiterServed(
  at: { readonly a: ZooKeeperLockEngine; readonly b: ZooKeeperLockEngine; readonly key: LockKey; readonly docPath: string },
  waiters: readonly Promise<HeldLock>[],
): Promise<void> {
  await Promise.all(waiters.map(async (acquiring) => (await acquiring).release()));
  await at.a.inspect(at.key);
  await at.b.inspect(at.key);
  expect(await privateLockOwner(at.docPath)).toBeNull();
}

/** The document node and its parents, as a client of the original algorithm creates them. */
async function createParents(docPath: string): Promise<void> {
  let path = '';
  for (const part of docPath.split('/').filter((p) => p !== '')) {
    path += `/${part}`;
    await fixture.raw.client.create(path, '', 'persistent').catch((error: unknown) => {
      if (!isZkCode(error, 'NODEEXISTS')) throw error;
    });
  }
}

/**
 * A queue entry of the original algorithm's client. An emptied document container may be reaped
 * by the server between our parent creates and the entry's create (NONODE): then create again.
 */
async function createQueueEntry(docPath: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    await createParents(docPath);
    try {
      return await fixture.raw.client.create(`${docPath}/A-`, '', 'ephemeralSequential');
    } catch (error) {
      if (!isZkCode(error, 'NONODE') || attempt === 3) throw error;
    }
  }
}

describe('releases delete only their own acquisition\'s nodes', () => {
  it('a holder releasing after an operator force-released its lock leaves the next holder\'s privateLock alone', async () => {
    const settings = zkSettings(connect);
    const link = await fixture.link();
    const a = pool.open({ ...settings, servers: link.connectString });
    const operator = pool.open(settings);
    const next = pool.open(settings);
    const key = { index: 'hole3', id: 'forced' };
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    // A cannot hear about the forced release before it releases: its link holds every byte.
    link.freeze();
    expect(await operator.forceRelease(key)).toBe(true);
    const nextHeld = await next.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('next') });
    const releasing = held.release();
    await nextTurn();
    link.unfreeze();
    await releasing;
    // A round trip on A's own session: whatever A sent before has been applied by now.
    await a.inspect(key);
    const inspection = await operator.inspect(key);
    expect(inspection.holder?.owner.requestId).toBe('next');
    expect(nextHeld.lost.aborted).toBe(false);
    await nextHeld.release();
  });

  it('a stale release after a forced release is refused even when the emptied document node was reaped and re-created', async () => {
    const settings = zkSettings(connect);
    const link = await fixture.link();
    const a = pool.open({ ...settings, servers: link.connectString });
    const operator = pool.open(settings);
    const next = pool.open(settings);
    const key = { index: 'hole3', id: 'reaped' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    link.freeze();
    expect(await operator.forceRelease(key)).toBe(true);
    // The server's container reaper removes the emptied document node (done by hand here, as it
    // would after znode.container.checkIntervalMs, unless its last tick did it already): its data
    // version starts again at 0.
    expect(await childrenOrEmpty(fixture.raw.client, docPath)).toEqual([]);
    await fixture.raw.client.delete(docPath).catch((error: unknown) => {
      if (!isZkCode(error, 'NONODE')) throw error;
    });
    const nextHeld = await next.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('next') });
    const successor = await privateLockOwner(docPath);
    expect(successor).not.toBeNull();
    const releasing = held.release();
    await nextTurn();
    link.unfreeze();
    await releasing;
    await a.inspect(key);
    expect(await privateLockOwner(docPath)).toBe(successor);
    expect(nextHeld.lost.aborted).toBe(false);
    await nextHeld.release();
  });

  it('a forced release of another document does not keep a holder from deleting its own privateLock', async () => {
    const settings = zkSettings(connect);
    const a = pool.open(settings);
    const b = pool.open(settings);
    const operator = pool.open(settings);
    const mine = { index: 'hole3', id: 'unrelated-mine' };
    const other = { index: 'hole3', id: 'unrelated-forced' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), mine);
    const held = await a.acquire(mine, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    const forced = await b.acquire(other, 'foreground', { timeoutMs: 2_000, owner: owner('b') });
    expect(await operator.forceRelease(other)).toBe(true);
    await held.release();
    await a.inspect(mine);
    expect(await privateLockOwner(docPath)).toBeNull();
    const again = await operator.acquire(mine, 'foreground', { timeoutMs: 2_000, owner: owner('again') });
    await again.release();
    await forced.release();
  });

  it('a yield refused only because of a forced release elsewhere gives privateLock back, and every waiter is served', async () => {
    const settings = zkSettings(connect);
    const a = pool.open(settings);
    const b = pool.open(settings);
    const operator = pool.open(settings);
    const key = { index: 'hole3', id: 'yield-mine' };
    const other = { index: 'hole3', id: 'yield-forced' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    const localWaiter = a.acquire(key, 'foreground', { timeoutMs: 20_000, owner: owner('a-next') });
    const foreignWaiter = b.acquire(key, 'foreground', { timeoutMs: 20_000, owner: owner('b') });
    await waitFor(async () => (await a.inspect(key)).queue.length === 2);
    const forced = await operator.acquire(other, 'foreground', { timeoutMs: 2_000, owner: owner('forced') });
    expect(await operator.forceRelease(other)).toBe(true);
    // Not handed over locally: the yield transaction (re-queue + delete privateLock) is refused by its epoch check.
    await held.release({ handOver: false });
    await expectEveryWaiterServed({ a, b, key, docPath }, [localWaiter, foreignWaiter]);
    await forced.release();
  });

  it('a yield refused because the holder\'s queue entry was deleted by hand still gives privateLock back, and every waiter is served', async () => {
    const settings = zkSettings(connect);
    const a = pool.open(settings);
    const b = pool.open(settings);
    const key = { index: 'hole3', id: 'yield-entry-gone' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    // A takes the lock through the queue, so its holder has a queue entry.
    const first = await b.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('b-first') });
    const queued = a.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('a') });
    await waitFor(async () => (await childrenOrEmpty(fixture.raw.client, docPath)).some((child) => child.startsWith('A-')));
    await first.release();
    const held = await queued;
    const [entry] = (await childrenOrEmpty(fixture.raw.client, docPath)).filter((child) => child !== PRIVATE_LOCK);
    expect(entry).toBeDefined();
    const localWaiter = a.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('a-next') });
    const foreignWaiter = b.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('b') });
    await waitFor(async () => (await childrenOrEmpty(fixture.raw.client, docPath)).filter((child) => child !== PRIVATE_LOCK).length === 2);
    // An operator deletes A's entry by hand (privateLock stays A's): the yield's last operation,
    // deleting that entry, is refused. privateLock is still A's: it must be given back, not left
    // to the session's end (every later writer of the document would wait for it).
    await fixture.raw.client.delete(`${docPath}/${entry!}`, -1);
    await held.release({ handOver: false });
    await expectEveryWaiterServed({ a, b, key, docPath }, [localWaiter, foreignWaiter]);
  });

  it('a yield refused as a whole request (not by one of its operations) looks at what it did, and every waiter is served', async () => {
    const { link, a, b, key, docPath } = await behindForwarder('yield-refused-whole');
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    const localWaiter = a.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('a-next') });
    const foreignWaiter = b.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('b') });
    await waitFor(async () => (await childrenOrEmpty(fixture.raw.client, docPath)).some((child) => child !== PRIVATE_LOCK));
    // The server runs none of A's yield and answers THROTTLEDOP for the request as a whole (a reply
    // header, no answer per operation). Thrown, it left the lock in 'yielding' (nobody served) and
    // the release's promise rejected.
    const refused = link.answerWithError([ZK_OPCODE.multi], ZK_RC.THROTTLEDOP, { applied: false });
    await held.release({ handOver: false });
    await refused;
    await expectEveryWaiterServed({ a, b, key, docPath }, [localWaiter, foreignWaiter]);
  });

  it('a release refused as a whole request and not applied is sent again, not left to the session\'s end', async () => {
    const { link, a, b, key, docPath } = await behindForwarder('release-refused-whole');
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    // The server runs none of A's release (THROTTLEDOP: "not executed at all, please retry"), and A
    // is told so for the request as a whole. Left as it was, privateLock stayed A's until A's
    // session ended: every writer of the document, in every process, waited for it.
    const refused = link.answerWithError([ZK_OPCODE.multi], ZK_RC.THROTTLEDOP, { applied: false });
    await held.release();
    await refused;
    const next = await b.acquire(key, 'foreground', { timeoutMs: 1_500, owner: owner('b') });
    await next.release();
    await a.inspect(key);
    expect(await privateLockOwner(docPath)).toBeNull();
  });

  it.each([
    ['a known document (fast path: privateLock and the document\'s bump in one transaction)', [ZK_OPCODE.multi], true],
    ['a new document (its container and privateLock in one transaction)', [ZK_OPCODE.multi], false],
  ])('an acquisition of %s refused as a whole request after the server ran it finds its privateLock, not an orphan', async (_name, opcodes, known) => {
    const { link, a, b, key, docPath } = await behindForwarder(`acquire-refused-whole-${known ? 'known' : 'new'}`);
    if (known) await makeKnown(a, [key]);
    // The server creates A's privateLock; A is told the request was refused as a whole (SESSIONMOVED).
    // Taken as refused, A's waiter was answered unavailable and the privateLock it had created stayed
    // until A's session ended: every writer of the document, in every process, waited for it.
    const refused = link.answerWithError(opcodes, ZK_RC.SESSIONMOVED);
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    await refused;
    expect((await a.inspect(key)).holder?.owner).toEqual(owner('a'));
    await held.release();
    await (await b.acquire(key, 'foreground', { timeoutMs: 1_500, owner: owner('b') })).release();
    expect(await privateLockOwner(docPath)).toBeNull();
  });

  it.each([
    ['the fast path takes privateLock', 'fast-path'],
    ['a queue entry is created', 'enter-queue'],
    ['the head of the queue takes privateLock', 'arbitrate'],
  ] as const)('when %s and the read sent beside the create is refused (THROTTLEDOP), the acquisition reconciles instead of leaving the node orphaned', async (_name, step) => {
    const { link, a, b, key, docPath } = await behindForwarder(`read-beside-create-${step}`);
    // Warm: A knows the document node, so its next acquire starts with the one-round-trip fast path.
    await makeKnown(a, [key]);
    let holder: HeldLock | null = null;
    let throttled: Promise<void>;
    let acquiring: Promise<HeldLock>;
    if (step === 'fast-path') {
      throttled = link.answerWithError([ZK_OPCODE.getChildren2], ZK_RC.THROTTLEDOP);
      acquiring = a.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('a') });
    } else {
      holder = await b.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('holder') });
      // enter-queue: the fast path's read (its create finds privateLock taken), then the entry's read.
      throttled = step === 'enter-queue' ? link.answerWithError([ZK_OPCODE.getChildren2], ZK_RC.THROTTLEDOP, { times: 2 }) : Promise.resolve();
      acquiring = a.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('a') });
      await waitFor(async () => (await childrenOrEmpty(fixture.raw.client, docPath)).some((child) => child.startsWith('A-')));
      if (step === 'arbitrate') throttled = link.answerWithError([ZK_OPCODE.getChildren2], ZK_RC.THROTTLEDOP);
      await holder.release();
    }
    // Taken as a refusal, A's request failed (unavailable) and the node its create had made stayed
    // A's until its session ended: every later writer of the document waited on it.
    const held = await acquiring;
    await throttled;
    expect((await a.inspect(key)).holder?.owner).toEqual(owner('a'));
    await held.release();
    await (await b.acquire(key, 'foreground', { timeoutMs: 1_500, owner: owner('b') })).release();
    await a.inspect(key);
    expect(await childrenOrEmpty(fixture.raw.client, docPath)).toEqual([]);
  });

  it('a step-back whose reply was lost is not replayed as a path delete after reconnecting', async () => {
    const settings = zkSettings(connect);
    const link = await fixture.link();
    const a = pool.open({ ...settings, servers: link.connectString });
    const key = { index: 'hole3', id: 'step-back' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    // Warm: A knows the document node, so its next acquire is the one-round-trip fast path.
    await makeKnown(a, [key]);
    // A client of the original algorithm queues first and has not taken privateLock yet.
    const seedEntry = await createQueueEntry(docPath);
    // The fast path's own transaction (privateLock and the document's bump) passes; the step-back's is the next.
    const dropped = link.dropReplyTo([ZK_OPCODE.delete, ZK_OPCODE.multi], { freezeAfter: true, skip: 1 });
    const acquiring = a.acquire(key, 'foreground', { timeoutMs: 20_000, owner: owner('a') });
    const outcome = acquiring.then(
      () => 'granted',
      (error: unknown) => (error instanceof LockUnavailableError ? 'unavailable' : 'failed'),
    );
    // A's fast path saw the seed entry ahead of it and stepped back; the server applied the delete.
    await dropped;
    await waitFor(async () => (await privateLockOwner(docPath)) === null);
    await fixture.raw.client.create(`${docPath}/${PRIVATE_LOCK}`, '', 'ephemeral');
    link.unfreeze();
    // A is back on its session and has acted on the lost reply: either its acquisition ended, or
    // it queued an entry of its own behind the seed client.
    await waitFor(async () => {
      const settled = await Promise.race([outcome, nextTurn().then(() => null)]);
      const entries = (await childrenOrEmpty(fixture.raw.client, docPath)).filter((c) => c.startsWith('A-'));
      return settled !== null || entries.length === 2;
    }, 15_000);
    expect(await privateLockOwner(docPath)).toBe(fixture.raw.client.sessionId);
    // The seed client finishes; A is served in its turn.
    await fixture.raw.client.delete(seedEntry);
    await fixture.raw.client.delete(`${docPath}/${PRIVATE_LOCK}`);
    expect(await outcome).toBe('granted');
    await (await acquiring).release();
    expect(await childrenOrEmpty(fixture.raw.client, docPath)).toEqual([]);
  });

  it('a release whose reply was lost does not delete the privateLock of the holder that came next', async () => {
    const settings = zkSettings(connect);
    const link = await fixture.link();
    const a = pool.open({ ...settings, servers: link.connectString });
    const waiter = pool.open(settings);
    const key = { index: 'hole3', id: 'release-reply' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    // A document A created would go with A's release, which the waiter's entry then refuses: the
    // release that runs must be the plain one.
    await makeKnown(a, [key]);
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    const waiting = waiter.acquire(key, 'foreground', { timeoutMs: 20_000, owner: owner('waiter') });
    await waitFor(async () => (await a.inspect(key)).queue.length === 1);
    const dropped = link.dropReplyTo([ZK_OPCODE.delete, ZK_OPCODE.multi], { freezeAfter: true });
    const releasing = held.release();
    await dropped;
    const next = await waiting;
    const successor = await privateLockOwner(docPath);
    expect(successor).not.toBeNull();
    link.unfreeze();
    await releasing;
    await a.inspect(key);
    expect(await privateLockOwner(docPath)).toBe(successor);
    expect((await waiter.inspect(key)).holder?.owner.requestId).toBe('waiter');
    await next.release();
  });

  it('a bulk\'s keys learn of a forced release too (they arm no watch of their own), and only the forced one is lost', async () => {
    const settings = zkSettings(connect);
    const a = pool.open(settings);
    const operator = pool.open(settings);
    const keys = Array.from({ length: 20 }, (_, i) => ({ index: 'hole3', id: `bulk-forced-${i}` }));
    const granted: HeldLock[] = [];
    const result = await a.acquireEach(keys, 'background', { timeoutMs: 5_000, owner: owner('bulk'), onGranted: (lock) => granted.push(lock) });
    expect(result.failed.size).toBe(0);
    const forced = granted.find((lock) => lock.key.id === 'bulk-forced-7')!;
    const readsBefore = a.stats().zkOps.get;
    expect(await operator.forceRelease(forced.key)).toBe(true);
    await waitFor(() => forced.lost.aborted);
    // The epoch read again, then each of the twenty privateLocks (all older than the forced release).
    await waitFor(() => a.stats().zkOps.get >= readsBefore + 1 + keys.length);
    await a.inspect({ index: 'hole3', id: 'unrelated' });
    expect(granted.filter((lock) => lock.lost.aborted).map((lock) => lock.key.id)).toEqual(['bulk-forced-7']);
    expect(granted.filter((lock) => lock !== forced).every((lock) => lock.usable())).toBe(true);
    await Promise.all(granted.map((lock) => lock.release()));
  });

  it('a forced release while the holder\'s connection is down is learned when the session reconnects', async () => {
    const settings = zkSettings(connect);
    const link = await fixture.link();
    const a = pool.open({ ...settings, servers: link.connectString });
    const operator = pool.open(settings);
    const key = { index: 'hole3', id: 'forced-while-away' };
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    // A's connection breaks and its reconnect is held back until the forced release has committed:
    // the epoch's data watch comes back with the session (the client re-registers it) and fires.
    link.freeze();
    link.dropAll();
    expect(await operator.forceRelease(key)).toBe(true);
    expect(held.lost.aborted).toBe(false);
    link.unfreeze();
    await waitFor(() => held.lost.aborted);
    // Seen through the epoch, not through the safety margin of a silent link.
    expect(String((held.lost.reason as Error).message)).toContain('forced release');
    await held.release();
  });

  it('a fast-path grant learns of a forced release from the epoch watch; a lock taken after it stays usable', async () => {
    const settings = zkSettings(connect);
    const a = pool.open(settings);
    const operator = pool.open(settings);
    const key = { index: 'hole3', id: 'watch-from-grant' };
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    expect(await operator.forceRelease(key)).toBe(true);
    await waitFor(() => held.lost.aborted);
    await held.release();
    // Created after the forced release: the epoch's next look (another forced release) leaves it be.
    const again = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a2') });
    const elsewhere = { index: 'hole3', id: 'forced-after' };
    const taken = await operator.acquire(elsewhere, 'foreground', { timeoutMs: 2_000, owner: owner('operator') });
    const readsBefore = a.stats().zkOps.get;
    expect(await operator.forceRelease(elsewhere)).toBe(true);
    // The epoch read again, then `again`'s privateLock (older than this forced release) verified.
    await waitFor(() => a.stats().zkOps.get >= readsBefore + 2);
    await a.inspect({ index: 'hole3', id: 'unrelated' });
    expect(again.usable()).toBe(true);
    await Promise.all([again.release(), taken.release()]);
  });
});
