import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { HeldLock } from '../../../src/lock/lock-engine.js';
import { childrenOrEmpty } from '../../../src/zookeeper-client/zk-client.js';
import { PRIVATE_LOCK, documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { type ProxyRuntime, startProxyRuntime } from '../../../src/server/proxy-runtime.js';
import { type EsStandIn, startEsStandIn } from '../../support/es-stand-in.js';
import { testSettings } from '../../support/test-settings.js';
import { waitForLockService } from '../../support/write-stack.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';
import { exchange } from '../faults/fault-kit.js';
import { makeKnown, useLockFixture, zkSettings } from './zk-test-engines.js';

/**
 * An operator deletes a holder's privateLock by hand (zkCli): the holder learns it from its watch
 * and forwards nothing new under it, and its release deletes nothing that is not its own — never
 * the privateLock of the holder that came next.
 */
const fixture = useLockFixture();
const { connect, pool, privateLockOwner } = fixture;

describe('a privateLock deleted by hand', () => {
  it.each([
    ['a fast-path grant', true],
    ['a new document\'s grant', false],
  ])('marks %s lost at once, and its local waiter is not handed the lock while another process holds it', async (_name, known) => {
    const settings = zkSettings(connect);
    const a = pool.open(settings);
    const b = pool.open(settings);
    const key = { index: 'hand-deleted', id: `lost-${known ? 'known' : 'new'}` };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    if (known) await makeKnown(a, [key]);
    const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a') });
    const localWaiter = a.acquire(key, 'foreground', { timeoutMs: 10_000, owner: owner('a-next') });
    await fixture.raw.client.delete(`${docPath}/${PRIVATE_LOCK}`, -1);
    await waitFor(() => held.lost.aborted);
    expect(String((held.lost.reason as Error).message)).toContain('deleted');
    const other = await b.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('b') });
    const bSession = await privateLockOwner(docPath);
    await held.release();
    // A's release deleted nothing of B's; A's waiter queues behind B instead of being handed A's lost lock.
    await a.inspect(key);
    expect(await privateLockOwner(docPath)).toBe(bSession);
    expect((await b.inspect(key)).holder?.owner.requestId).toBe('b');
    expect(other.lost.aborted).toBe(false);
    await other.release();
    const next = await localWaiter;
    expect((await b.inspect(key)).holder?.owner.requestId).toBe('a-next');
    await next.release();
  });

  // A bulk's key has no holder watch (it learns of the deletion at its release). Its lock handed
  // on to a request of its own process must not pass on the deletion unseen, and the yield that
  // gives it back with a waiter (one transaction that deletes privateLock by name) must not
  // delete the privateLock of the holder that came next.
  it("gives a bulk key's lock back without deleting the next holder's privateLock when a local request waits", async () => {
    const settings = zkSettings(connect);
    const a = pool.open(settings);
    const b = pool.open(settings);
    const key = { index: 'hand-deleted', id: 'bulk-yield' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    const bulkHeld: HeldLock[] = [];
    const sibling = { index: 'hand-deleted', id: 'bulk-yield-sibling' };
    await a.acquireEach([key, sibling], 'background', { timeoutMs: 2_000, owner: owner('a-bulk'), onGranted: (held) => bulkHeld.push(held) });
    const held = bulkHeld.find((lock) => lock.key.id === key.id);
    const siblingHeld = bulkHeld.find((lock) => lock.key.id === sibling.id);
    if (held === undefined || siblingHeld === undefined) throw new Error('the bulk keys were not granted');
    await siblingHeld.release();
    await fixture.raw.client.delete(`${docPath}/${PRIVATE_LOCK}`, -1);
    const other = await b.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('b') });
    const bSession = await privateLockOwner(docPath);
    const localWaiter = a.acquire(key, 'foreground', { timeoutMs: 10_000, owner: owner('a-next') });
    await waitFor(() => a.activity().waiting === 1);
    // No hand-over: the lock goes back to the queue (the yield), with A's waiter re-queued.
    await held.release({ handOver: false });
    await a.inspect(key);
    expect(await privateLockOwner(docPath)).toBe(bSession);
    expect(other.lost.aborted).toBe(false);
    expect((await b.inspect(key)).holder?.owner.requestId).toBe('b');
    await other.release();
    const next = await localWaiter;
    expect(next.lost.aborted).toBe(false);
    await next.release();
  });
});

describe('a single request served first by a bulk\'s batch grant', () => {
  // The batch grant of a bulk's keys arms no holder watch (its keys learn of a deletion by hand at
  // their release); a single request of the same process waiting for one of those documents, and
  // served first (foreground before the bulk's background), is a single write all the same.
  it('is told at once when its privateLock is deleted by hand', async () => {
    const settings = zkSettings(connect);
    const a = pool.open(settings);
    const keys = [0, 1].map((i) => ({ index: 'hand-deleted', id: `batch-first-${i}` }));
    const docPath = documentPath(normalizeRoot(settings.lockRoot), keys[0]!);
    const bulkHeld: HeldLock[] = [];
    const bulk = a.acquireEach(keys, 'background', { timeoutMs: 10_000, owner: owner('a-bulk'), onGranted: (held) => bulkHeld.push(held) });
    // In the same turn: it waits with the bulk's key and is served first by the batch's grant.
    const single = a.acquire(keys[0]!, 'foreground', { timeoutMs: 10_000, owner: owner('a-single') });
    const held = await single;
    expect(held.handedOverLocally).toBe(false);
    expect((await a.inspect(keys[0]!)).holder?.owner.requestId).toBe('a-single');
    await fixture.raw.client.delete(`${docPath}/${PRIVATE_LOCK}`, -1);
    await waitFor(() => held.lost.aborted);
    expect(String((held.lost.reason as Error).message)).toContain('deleted');
    await held.release();
    await bulk;
    await Promise.all(bulkHeld.map((lock) => lock.release()));
  });
});

describe('three proxies and the stand-in: a hand-deleted privateLock never lets a third write overlap the second', () => {
  let standIn: EsStandIn;
  const proxies: ProxyRuntime[] = [];

  beforeAll(async () => {
    standIn = await startEsStandIn();
  });

  afterAll(async () => {
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
    await standIn?.stop();
  });

  it.each([1, 2, 3, 4])('holder 1 releases after holder 2 took the document: holder 2 keeps it (round %i)', async (round) => {
    standIn.resetLog();
    const lockRoot = `/hand-deleted-${round}-${Date.now().toString(36)}`;
    const settingsFor = testSettings({
      zookeeper: { servers: connect, lockRoot, sessionTimeoutMs: 4_000, lingerMs: 0 }, lock: { foregroundTimeoutMs: 10_000 },
      elasticsearch: { hosts: [standIn.url] },
    });
    const [second, third] = await Promise.all([startProxyRuntime(settingsFor, pino({ level: 'silent' })), startProxyRuntime(settingsFor, pino({ level: 'silent' }))]);
    proxies.push(second!, third!);
    await Promise.all(proxies.map(waitForLockService));
    const first = pool.open(zkSettings(connect, { lockRoot }));
    const index = `hand-deleted-${round}`;
    const key = { index, id: '1' };
    const docPath = documentPath(normalizeRoot(lockRoot), key);
    const url = (proxy: ProxyRuntime): string => `http://127.0.0.1:${proxy.proxyAddress.port}/${index}/_doc/1`;
    // Holder 1 is writing (holding the document's lock).
    const holder1 = await first.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('holder-1') });
    // An operator deletes its privateLock by hand; holder 2 takes the document, its write held at the cluster.
    await fixture.raw.client.delete(`${docPath}/${PRIVATE_LOCK}`, -1);
    const gate = standIn.gate((request) => request.body.toString().includes('"holder":2'));
    const write2 = exchange(url(second!), { method: 'PUT', body: '{"holder":2}' });
    await gate.arrived(1);
    const holder2Session = await privateLockOwner(docPath);
    expect(holder2Session).not.toBeNull();
    // Holder 1's write ends: its release must not delete holder 2's privateLock.
    await holder1.release();
    await first.inspect(key);
    expect(await privateLockOwner(docPath)).toBe(holder2Session);
    // A third write waits for holder 2's: it is not at the cluster while holder 2's is.
    const write3 = exchange(url(third!), { method: 'PUT', body: '{"holder":3}' });
    await waitFor(async () => (await childrenOrEmpty(fixture.raw.client, docPath)).some((child) => child !== PRIVATE_LOCK));
    expect(standIn.pendingWrites().filter((write) => write.key === `${index}/1`)).toHaveLength(1);
    gate.release();
    const [answer2, answer3] = await Promise.all([write2, write3]);
    expect(answer2.kind === 'answered' && answer2.answer.status < 300).toBe(true);
    expect(answer3.kind === 'answered' && answer3.answer.status < 300).toBe(true);
    expect(standIn.overlaps.count).toBe(0);
    expect(standIn.document(index, '1')?.source).toEqual({ holder: 3 });
    gate.remove();
  });
});

describe('a bulk\'s key whose privateLock was deleted by hand', () => {
  it('releases without deleting the privateLock of the holder that came next', async () => {
    const settings = zkSettings(connect);
    const a = pool.open(settings);
    const b = pool.open(settings);
    const keys = Array.from({ length: 5 }, (_, i) => ({ index: 'hand-deleted-bulk', id: `doc-${i}` }));
    const root = normalizeRoot(settings.lockRoot);
    const granted: HeldLock[] = [];
    const result = await a.acquireEach(keys, 'background', { timeoutMs: 5_000, owner: owner('bulk'), onGranted: (lock) => granted.push(lock) });
    expect(result.failed.size).toBe(0);
    const victim = keys[2]!;
    const victimDoc = documentPath(root, victim);
    await fixture.raw.client.delete(`${victimDoc}/${PRIVATE_LOCK}`, -1);
    const next = await b.acquire(victim, 'foreground', { timeoutMs: 2_000, owner: owner('next') });
    const nextSession = await privateLockOwner(victimDoc);
    expect(nextSession).not.toBeNull();
    // The bulk ends: its keys are released in one transaction.
    await Promise.all(granted.map((lock) => lock.release()));
    await a.inspect(victim);
    expect(await privateLockOwner(victimDoc)).toBe(nextSession);
    expect(next.lost.aborted).toBe(false);
    // The other keys were released as usual.
    for (const key of keys.filter((k) => k !== victim)) expect(await privateLockOwner(documentPath(root, key))).toBeNull();
    await next.release();
  });
});
