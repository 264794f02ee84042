import { afterEach, expect, inject, it, vi } from 'vitest';
import type { HeldLock } from '../../../src/lock/lock-engine.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { ZK_OPCODE } from '../../support/zookeeper-frames.js';
import { owner } from '../../unit/lock/lock-engine-suite.js';
import { EnginePool, zkSettings } from './zk-test-engines.js';

/**
 * A forced release reaches the holder's process as two watch events at once: the forced-release
 * epoch's and its privateLock's. The privateLock's marks the lock lost right away; the epoch's
 * alone needed two more round trips (read the epoch, then verify privateLock), and within them a
 * lingering lock resumed by a new request, or a local hand-over, forwarded a new write while
 * another process held the document. Here those round trips never complete (the reply to the
 * epoch's read is lost and the link frozen), so only the events can tell the holder.
 */
const connect = inject('zookeeperConnect');
const pool = new EnginePool();
let link: TcpForwarder | null = null;

afterEach(async () => {
  link?.unfreeze();
  await pool.closeAll();
  await link?.close();
  link = null;
});

/** Lets everything already triggered run (a grant without ZooKeeper completes within one turn). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

it.each([
  ['a lingering lock is not resumed by a new request', 'linger'],
  ['a held lock is not handed over to the next local request', 'hand-over'],
] as const)('after a forced release whose events reached the holder, %s while another process holds the document', async (_name, mode) => {
  const settings = zkSettings(connect, { lingerMs: mode === 'linger' ? 600_000 : 0 });
  link = await TcpForwarder.start(connect);
  const a = pool.open({ ...settings, servers: link.connectString });
  const operator = pool.open(settings);
  const b = pool.open(settings);
  const key = { index: 'forced-window', id: mode };
  // A's lock: lingering after two requests at once (a document A writes again and again), or held with a local waiter.
  const first = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a-1') });
  const second = a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a-2') });
  await first.release();
  const held = await second;
  let localWaiter: Promise<HeldLock> | null = null;
  if (mode === 'linger') await held.release();
  else localWaiter = a.acquire(key, 'foreground', { timeoutMs: 20_000, owner: owner('a-waiter') });
  // A round trip on A's session: what A sent before (its grant's reads) is answered.
  await a.inspect({ index: 'forced-window', id: 'unrelated' });
  // The epoch's read after its event loses its reply; A's link then freezes.
  const epochReadLost = link.dropReplyTo([ZK_OPCODE.getData], { freezeAfter: true });
  expect(await operator.forceRelease(key)).toBe(true);
  await epochReadLost;
  const other = await b.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('b') });
  // A new request of A (linger), or A's holder finishing (hand-over): nothing may be granted at A now.
  if (mode === 'hand-over') await held.release();
  const next = localWaiter ?? a.acquire(key, 'foreground', { timeoutMs: 20_000, owner: owner('a-next') });
  let settled = false;
  next.then(
    () => (settled = true),
    () => (settled = true),
  );
  await nextTurn();
  await nextTurn();
  // Waiting for ZooKeeper (its link is frozen), not granted.
  expect(settled).toBe(false);
  expect(a.activity()).toMatchObject({ held: 0, waiting: 1 });
  expect(other.usable()).toBe(true);
  await other.release();
  link.unfreeze();
  const granted = await next;
  expect(granted.handedOverLocally).toBe(false);
  await granted.release();
});

it('the limit: before the forced release\'s events reach the holder, a lingering lock is still resumed; it is lost the moment they arrive', async () => {
  const settings = zkSettings(connect, { lingerMs: 600_000 });
  link = await TcpForwarder.start(connect);
  const a = pool.open({ ...settings, servers: link.connectString });
  const operator = pool.open(settings);
  const b = pool.open(settings);
  const key = { index: 'forced-window', id: 'limit' };
  const first = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a-1') });
  const second = a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a-2') });
  await first.release();
  await (await second).release();
  await a.inspect({ index: 'forced-window', id: 'unrelated' });
  // Nothing ZooKeeper sends reaches A for now (its requests still do): a slow or stalled inbound link.
  link.holdReplies();
  expect(await operator.forceRelease(key)).toBe(true);
  const other = await b.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('b') });
  // A cannot know yet: its lingering lock serves its next request without ZooKeeper.
  const stale = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a-stale') });
  expect(stale.handedOverLocally).toBe(true);
  link.passReplies();
  // The events arrive: the lock is lost at once, so a write not yet sent is not sent (and with
  // proxy.fencing=on one that was is refused by Elasticsearch).
  await vi.waitFor(() => expect(stale.lost.aborted).toBe(true));
  expect(other.usable()).toBe(true);
  await stale.release();
  await other.release();
});
