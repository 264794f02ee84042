import { expect, it } from 'vitest';
import { childrenOrEmpty } from '../../../src/zookeeper-client/zk-client.js';
import { PRIVATE_LOCK, documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { ZK_RC } from '../../../src/zookeeper-client/zk-errors.js';
import { ZK_OPCODE } from '../../support/zookeeper-frames.js';
import { owner } from '../../unit/lock/lock-engine-suite.js';
import { makeKnown, useLockFixture, zkSettings } from './zk-test-engines.js';

/**
 * A release this process has not sent yet goes out inside the next acquisition of the same
 * document (one transaction: [checks, delete privateLock, create privateLock]). When ZooKeeper
 * refuses that transaction as a whole request, the release must still happen: on its own, after
 * looking at what is there.
 */
const fixture = useLockFixture();
const { connect, pool } = fixture;

it.each([1, 2, 3, 4, 5, 6])('a fused release whose transaction is refused as a whole (THROTTLEDOP) still runs: no lock is left behind (round %i)', async (round) => {
  const settings = zkSettings(connect);
  const link = await fixture.link();
  const a = pool.open({ ...settings, servers: link.connectString });
  const b = pool.open(settings);
  const key = { index: 'fused', id: `refused-${round}` };
  const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
  // Known to A: its next acquisition takes the fast path, which fuses a pending release.
  await makeKnown(a, [key]);
  const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a-first') });
  // Answered after the holder watch's first read: the watch vouches for privateLock, so the release may be fused.
  await a.inspect(key);
  // The next multi on A's link is the fused one; the server runs none of it and answers THROTTLEDOP.
  const refused = link.answerWithError([ZK_OPCODE.multi], ZK_RC.THROTTLEDOP, { applied: false });
  // Released and wanted again in the same turn: the release is still pending when the acquisition starts.
  const releasing = held.release();
  const again = a.acquire(key, 'foreground', { timeoutMs: 3_000, owner: owner('a-again') });
  await refused;
  await releasing;
  // Refused as a request, the acquisition looked at what it had and went on: it is served.
  const second = await again;
  expect((await a.inspect(key)).holder?.owner).toEqual(owner('a-again'));
  await second.release();
  // The first lock's release ran after all: the document is free for another process.
  const other = await b.acquire(key, 'foreground', { timeoutMs: 3_000, owner: owner('b') });
  await other.release();
  await a.inspect(key);
  expect(await childrenOrEmpty(fixture.raw.client, docPath)).not.toContain(PRIVATE_LOCK);
});
