import { expect, it, vi } from 'vitest';
import { childrenOrEmpty } from '../../../src/zookeeper-client/zk-client.js';
import { PRIVATE_LOCK, documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { ZK_RC } from '../../../src/zookeeper-client/zk-errors.js';
import { ZK_OPCODE } from '../../support/zookeeper-frames.js';
import { owner } from '../../unit/lock/lock-engine-suite.js';
import { useLockFixture, zkSettings } from './zk-test-engines.js';

/**
 * A holder whose local waiter is a background request, with another process's foreground request
 * queued, gives privateLock back in one transaction that re-queues the waiter. When ZooKeeper
 * refuses that transaction as a whole, privateLock is still ours and so is the queue entry the
 * foreground holder had, first in the queue: the background waiter must still come after the
 * other process's foreground request.
 */
const fixture = useLockFixture();
const { connect, pool } = fixture;

it('a background waiter comes after another process\'s foreground writer when the yield is refused as a whole (THROTTLEDOP)', async () => {
  const settings = zkSettings(connect);
  const link = await fixture.link();
  const a = pool.open({ ...settings, servers: link.connectString });
  const b = pool.open(settings);
  const key = { index: 'yield', id: 'refused' };
  const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
  const entries = async (): Promise<string[]> => (await childrenOrEmpty(fixture.raw.client, docPath)).filter((name) => name !== PRIVATE_LOCK);
  // A takes the lock through the queue: its foreground entry stays first while it holds.
  const first = await b.acquire(key, 'foreground', { timeoutMs: 3_000, owner: owner('b-first') });
  const queuedA = a.acquire(key, 'foreground', { timeoutMs: 3_000, owner: owner('a-foreground') });
  await vi.waitFor(async () => expect(await entries()).toHaveLength(1));
  await first.release();
  const held = await queuedA;
  // B's foreground request queues behind A's entry; then a background request of A's waits. Arrived
  // after B's entry, it can only learn of it: A yields rather than hand the lock over locally.
  const foreground = b.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('b-foreground') });
  await vi.waitFor(async () => expect(await entries()).toHaveLength(2));
  let backgroundServed = false;
  const background = a.acquire(key, 'background', { timeoutMs: 10_000, owner: owner('a-background') }).then((lock) => {
    backgroundServed = true;
    return lock;
  });
  await vi.waitFor(async () => expect((await a.inspect(key)).queue.map((waiter) => waiter.owner)).toContainEqual(owner('a-background')));
  // The yield is the next transaction on A's link; the server runs none of it and answers THROTTLEDOP.
  const refused = link.answerWithError([ZK_OPCODE.multi], ZK_RC.THROTTLEDOP, { applied: false });
  await held.release();
  await refused;
  const foregroundLock = await foreground;
  expect(backgroundServed).toBe(false);
  expect((await b.inspect(key)).holder?.owner).toEqual(owner('b-foreground'));
  await foregroundLock.release();
  const backgroundLock = await background;
  await backgroundLock.release();
});
