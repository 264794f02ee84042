import { expect, it } from 'vitest';
import { encodeNodeData } from '../../../src/lock/lock-node-data.js';
import { lockEvents } from '../../../src/lock/lock-events.js';
import { isZkCode } from '../../../src/zookeeper-client/zk-errors.js';
import { childrenOrEmpty } from '../../../src/zookeeper-client/zk-client.js';
import { PRIVATE_LOCK, documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import type { Connection } from '../../../src/lock/zookeeper/session/connection.js';
import type { LockZk } from '../../../src/lock/zookeeper/session/lock-zk.js';
import type { ZooKeeperLockEngine } from '../../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { ZK_OPCODE } from '../../support/zookeeper-frames.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';
import { makeKnown, useLockFixture, zkSettings } from './zk-test-engines.js';

/**
 * Nodes of the proxy's own session that no local lock claims (what a create applied by the server
 * but reported to the client as failed leaves behind) are found and deleted while the session
 * lives: after a reconnect, or when asked. Planted here through the engine's own session.
 */
const fixture = useLockFixture();
const { connect, pool } = fixture;
/** ZRUNTIMEINCONSISTENCY: what the C client reports for a reply it received out of order. */
const RUNTIME_INCONSISTENCY = -2;

/** The engine's own session (a test reaches into it to plant what a misreported reply leaves). */
async function sessionOf(engine: ZooKeeperLockEngine): Promise<LockZk> {
  const current = await (engine as unknown as { readonly connection: Connection }).connection.whenConnected();
  if (current === null) throw new Error('engine closed');
  return current.zk;
}

async function createParents(docPath: string): Promise<void> {
  let path = '';
  for (const part of docPath.split('/').filter((p) => p !== '')) {
    path += `/${part}`;
    await fixture.raw.client.create(path, '', 'persistent').catch((error: unknown) => {
      if (!isZkCode(error, 'NODEEXISTS')) throw error;
    });
  }
}

/** A privateLock and a queue entry of the engine's session whose acquisition no longer exists here. */
async function plantOrphans(engine: ZooKeeperLockEngine, docPath: string, what: { readonly privateLock: boolean }): Promise<void> {
  await createParents(docPath);
  const zk = await sessionOf(engine);
  const data = (guid: string): string => encodeNodeData({ guid, owner: null, priority: 'foreground', acquiredAt: Date.now(), message: '', entry: null });
  if (what.privateLock) await zk.create(`${docPath}/${PRIVATE_LOCK}`, data('gone-acquisition-1'), 'ephemeral');
  await zk.create(`${docPath}/A-`, data('gone-acquisition-2'), 'ephemeralSequential');
}

async function privateLockCzxid(docPath: string): Promise<number | null> {
  try {
    return (await fixture.raw.client.get(`${docPath}/${PRIVATE_LOCK}`)).stat.czxid;
  } catch {
    return null;
  }
}

it('after a reconnect, removes a planted privateLock and queue entry of its own session, and leaves a live lock alone', async () => {
  const settings = zkSettings(connect);
  const link = await fixture.link();
  let removed = 0;
  const a = pool.open({ ...settings, servers: link.connectString }, { events: lockEvents({ orphansRemoved: (count) => (removed += count) }) });
  const b = pool.open(settings);
  const root = normalizeRoot(settings.lockRoot);
  const live = { index: 'orphans', id: 'live' };
  const orphaned = { index: 'orphans', id: 'orphaned' };
  const liveDoc = documentPath(root, live);
  const orphanDoc = documentPath(root, orphaned);
  const held = await a.acquire(live, 'foreground', { timeoutMs: 2_000, owner: owner('live') });
  const heldCzxid = await privateLockCzxid(liveDoc);
  await plantOrphans(a, orphanDoc, { privateLock: true });
  // A stray entry beside the live lock's privateLock, too.
  await plantOrphans(a, liveDoc, { privateLock: false });
  expect(await childrenOrEmpty(fixture.raw.client, orphanDoc)).toHaveLength(2);
  // The link drops; the session reconnects (it never expires) and sweeps.
  link.dropAll();
  await waitFor(async () => (await childrenOrEmpty(fixture.raw.client, orphanDoc)).length === 0, 10_000);
  await waitFor(async () => (await childrenOrEmpty(fixture.raw.client, liveDoc)).length === 1, 10_000);
  // Counted once A has the answer (the raw client may see the deletes first).
  await waitFor(() => removed === 3);
  expect(await childrenOrEmpty(fixture.raw.client, liveDoc)).toEqual([PRIVATE_LOCK]);
  // The live lock kept its privateLock and is still vouched for.
  expect(await privateLockCzxid(liveDoc)).toBe(heldCzxid);
  expect(held.usable()).toBe(true);
  // The orphaned document is free for any process again.
  await (await b.acquire(orphaned, 'foreground', { timeoutMs: 1_000, owner: owner('b') })).release();
  await held.release();
});

it('sweeps when asked, and never deletes a node whose create answer is still on its way to a live acquisition', async () => {
  const settings = zkSettings(connect);
  const link = await fixture.link();
  let removed = 0;
  const a = pool.open({ ...settings, servers: link.connectString }, { events: lockEvents({ orphansRemoved: (count) => (removed += count) }) });
  const root = normalizeRoot(settings.lockRoot);
  const orphaned = { index: 'orphans', id: 'asked' };
  const racing = { index: 'orphans', id: 'racing' };
  const racingDoc = documentPath(root, racing);
  await plantOrphans(a, documentPath(root, orphaned), { privateLock: true });
  // A's acquisition reaches the server and its privateLock is created; the answer is held back.
  link.holdReplies();
  const acquiring = a.acquire(racing, 'foreground', { timeoutMs: 5_000, owner: owner('racing') });
  await waitFor(async () => (await privateLockCzxid(racingDoc)) !== null);
  // The sweep's listing is answered after the create it follows on the session: it sees the node.
  const sweeping = a.sweepOrphans();
  link.passReplies();
  await sweeping;
  const held = await acquiring;
  expect(held.usable()).toBe(true);
  expect(await childrenOrEmpty(fixture.raw.client, racingDoc)).toEqual([PRIVATE_LOCK]);
  // On a loaded machine the held replies may have cost the connection (that sweep then read nothing;
  // the reconnect's removes them): either way, exactly the planted pair goes.
  await a.sweepOrphans();
  expect(removed).toBe(2);
  expect(await childrenOrEmpty(fixture.raw.client, documentPath(root, orphaned))).toEqual([]);
  expect(await childrenOrEmpty(fixture.raw.client, racingDoc)).toEqual([PRIVATE_LOCK]);
  expect(await a.sweepOrphans()).toBe(0);
  await held.release();
});

it('an acquisition told its applied create failed (-2, runtime inconsistency) leaves no node behind: the document stays writable', async () => {
  const settings = zkSettings(connect);
  const link = await fixture.link();
  const a = pool.open({ ...settings, servers: link.connectString });
  const b = pool.open(settings);
  const key = { index: 'orphans', id: 'misreported' };
  const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
  await createParents(docPath);
  await makeKnown(a, [key]);
  // The server creates A's privateLock; A is told the request failed.
  const misreported = link.answerWithError([ZK_OPCODE.create, ZK_OPCODE.create2, ZK_OPCODE.multi], RUNTIME_INCONSISTENCY);
  const outcome = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') }).then(
    async (lock) => {
      await lock.release();
      return 'granted';
    },
    () => 'failed',
  );
  await misreported;
  expect(['granted', 'failed']).toContain(outcome);
  // Whatever A made of it, no node of A's outlives the acquisition: B takes the document.
  await (await b.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('b') })).release();
  await waitFor(async () => (await childrenOrEmpty(fixture.raw.client, docPath)).length === 0);
});

it('removes an orphaned privateLock that a request of the same process waits behind, which then gets the lock', async () => {
  const settings = zkSettings(connect);
  const a = pool.open(settings);
  const key = { index: 'orphans', id: 'waited-on' };
  const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
  await plantOrphans(a, docPath, { privateLock: true });
  const acquiring = a.acquire(key, 'foreground', { timeoutMs: 10_000, owner: owner('waiting') });
  // A queued behind the orphan (its own entry beside the planted one).
  await waitFor(async () => (await childrenOrEmpty(fixture.raw.client, docPath)).length === 3);
  expect(await a.sweepOrphans()).toBe(2);
  const held = await acquiring;
  expect((await a.inspect(key)).holder?.owner.requestId).toBe('waiting');
  await held.release();
  expect(await childrenOrEmpty(fixture.raw.client, docPath)).toEqual([]);
});
