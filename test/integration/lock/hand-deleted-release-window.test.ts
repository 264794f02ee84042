import { describe, expect, it } from 'vitest';
import type { HeldLock, LockKey } from '../../../src/lock/lock-engine.js';
import type { ZooKeeperLockEngine } from '../../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { lockEvents } from '../../../src/lock/lock-events.js';
import { PRIVATE_LOCK, documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';
import type { TcpForwarder } from '../../support/tcp-forwarder.js';
import { makeKnown, useLockFixture, zkSettings } from './zk-test-engines.js';

/**
 * A privateLock deleted by hand (zkCli) within one round trip of its holder's release: the release
 * is on its way (here: held in A's frozen link), the next holder takes the document meanwhile, and
 * then the release reaches the server. No watch can help — the release left before any event could
 * come back. What keeps the release from deleting the next holder's privateLock (same name, same
 * data version 0) is the owner check in its own transaction: every grant bumps the document node's
 * data version, and the release (or yield) checks the version its grant left. On the engine without
 * the check, the single writes' releases and the yield deleted the next holder's privateLock; a
 * bulk key's release was kept from it by its listing of the session's nodes, and is here for the
 * batch grant's token.
 */
const fixture = useLockFixture();
const { connect, pool, privateLockOwner } = fixture;

/** Lets the engine hand its pending requests to the socket. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * With A's link frozen (the deletion's watch event cannot reach A before its release goes out, and
 * the release reaches the server only after the next holder's grant — as a release sent within one
 * round trip of the deletion does): the privateLock at `docPath` deleted by hand, the next holder granted
 * by `takeNext`, then A's `held` released. A's session answers in order: once `inspect` is answered,
 * A's release has been applied or refused, and the next holder's privateLock must still be there.
 */
async function releaseAcrossHandDeletion(
  link: TcpForwarder,
  a: ZooKeeperLockEngine,
  key: LockKey,
  docPath: string,
  held: HeldLock,
  takeNext: () => Promise<HeldLock>,
): Promise<HeldLock> {
  link.freeze();
  await fixture.raw.client.delete(`${docPath}/${PRIVATE_LOCK}`, -1);
  const next = await takeNext();
  const nextSession = await privateLockOwner(docPath);
  expect(nextSession).not.toBeNull();
  const releasing = held.release();
  await nextTurn();
  link.unfreeze();
  await releasing;
  await a.inspect(key);
  expect(await privateLockOwner(docPath)).toBe(nextSession);
  return next;
}

describe('a release on its way when its privateLock is deleted by hand and the next holder takes it', () => {
  it.each([
    ['a single write on a known document (fast path)', 'known'],
    ['a single write on a new document (created with its privateLock)', 'new'],
    ['a bulk key', 'bulk'],
  ] as const)('%s: the release deletes nothing of the next holder', async (_name, how) => {
    const settings = zkSettings(connect);
    const link = await fixture.link();
    let lostAtRelease = 0;
    const a = pool.open({ ...settings, servers: link.connectString }, { events: lockEvents({ lostAtRelease: () => lostAtRelease++ }) });
    const b = pool.open(settings);
    const key = { index: 'release-window', id: how };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    if (how === 'known') await makeKnown(a, [key]);
    let held: HeldLock;
    if (how === 'bulk') {
      const granted: HeldLock[] = [];
      const sibling = { index: 'release-window', id: 'bulk-sibling' };
      await a.acquireEach([key, sibling], 'background', { timeoutMs: 2_000, owner: owner('a-bulk'), onGranted: (lock) => granted.push(lock) });
      await granted.find((lock) => lock.key.id === sibling.id)?.release();
      const mine = granted.find((lock) => lock.key.id === key.id);
      if (mine === undefined) throw new Error('the bulk key was not granted');
      held = mine;
    } else {
      held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    }
    // Everything A sent with its grant is answered (its holder watch, where it arms one).
    await a.inspect({ index: 'release-window', id: 'unrelated' });
    const next = await releaseAcrossHandDeletion(link, a, key, docPath, held, () => b.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('b') }));
    // Counted (es_lock_proxy_lock_lost_total) and logged as a lock lost while held.
    expect(lostAtRelease).toBe(1);
    expect(next.lost.aborted).toBe(false);
    expect((await b.inspect(key)).holder?.owner.requestId).toBe('b');
    await next.release();
    await b.inspect(key);
    expect(await privateLockOwner(docPath)).toBeNull();
  });

  it('a yield (the lock given back to the queue for another process\'s foreground writer) deletes nothing of the next holder', async () => {
    const settings = zkSettings(connect);
    const link = await fixture.link();
    let lostAtRelease = 0;
    const a = pool.open({ ...settings, servers: link.connectString }, { events: lockEvents({ lostAtRelease: () => lostAtRelease++ }) });
    const b = pool.open(settings);
    const key = { index: 'release-window', id: 'yield' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    // A background request of A waits; B's foreground writer queues: A's holder must yield, not hand on.
    const localWaiter = a.acquire(key, 'background', { timeoutMs: 20_000, owner: owner('a-next') });
    const next = b.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('b') });
    await waitFor(async () => (await a.inspect(key)).queue.length === 2);
    // B, at the head of the queue, takes the document.
    const nextHeld = await releaseAcrossHandDeletion(link, a, key, docPath, held, () => next);
    expect(lostAtRelease).toBe(1);
    expect(nextHeld.lost.aborted).toBe(false);
    await nextHeld.release();
    const served = await localWaiter;
    expect(served.lost.aborted).toBe(false);
    await served.release();
  });
});
