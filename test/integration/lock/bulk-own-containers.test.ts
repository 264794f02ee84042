import { describe, expect, it } from 'vitest';
import type { HeldLock, LockKey } from '../../../src/lock/lock-engine.js';
import { isZkCode } from '../../../src/zookeeper/zk-errors.js';
import { documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { owner } from '../../unit/lock/lock-engine-suite.js';
import { makeKnown, useLockFixture, zkSettings } from './zk-test-engines.js';

/**
 * A bulk's key whose document container this process created earlier (kept by a single write
 * that writes it again and again) deletes it at its release, as it deletes the containers its own
 * transaction creates — one operation in the release instead of a transaction of the server's
 * reaper later. A container anybody else made (a persistent node of another client) stays.
 */
const fixture = useLockFixture();
const { connect, pool } = fixture;

async function exists(path: string): Promise<boolean> {
  try {
    await fixture.raw.client.get(path);
    return true;
  } catch (error) {
    if (isZkCode(error, 'NONODE')) return false;
    throw error;
  }
}

async function bulkOver(keys: readonly LockKey[], engine: ReturnType<typeof pool.open>): Promise<void> {
  const held: HeldLock[] = [];
  const result = await engine.acquireEach(keys, 'background', { timeoutMs: 5_000, owner: owner('bulk'), onGranted: (lock) => held.push(lock) });
  expect(result.failed.size).toBe(0);
  expect(held).toHaveLength(keys.length);
  await Promise.all(held.map((lock) => lock.release()));
}

describe('a bulk over documents whose containers this process created before', () => {
  it('deletes the containers it created with its release, and leaves another client\'s document node alone', async () => {
    const settings = zkSettings(connect);
    const root = normalizeRoot(settings.lockRoot);
    const engine = pool.open(settings);
    const own = Array.from({ length: 3 }, (_, i) => ({ index: 'bulk-own-containers', id: `own-${i}` }));
    const foreign = { index: 'bulk-own-containers', id: 'foreign' };
    await makeKnown(engine, [own[0]!]); // the lock root and the index exist
    await fixture.raw.client.create(documentPath(root, foreign), '', 'persistent');
    // Written twice in a row: each single write's release keeps its document's container.
    await makeKnown(engine, [...own, foreign]);
    for (const key of own) expect(await exists(documentPath(root, key))).toBe(true);

    await bulkOver([...own, foreign], engine);

    for (const key of own) expect(await exists(documentPath(root, key))).toBe(false);
    expect(await exists(documentPath(root, foreign))).toBe(true);
    // Taken again, the documents are created afresh: every key granted, nothing left behind.
    await bulkOver(own, engine);
    for (const key of own) expect(await exists(documentPath(root, key))).toBe(false);
    await fixture.raw.client.delete(documentPath(root, foreign), -1);
  });
});
