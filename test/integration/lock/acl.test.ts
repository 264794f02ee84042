import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { HeldLock } from '../../../src/lock/lock-engine.js';
import { isZkCode } from '../../../src/zookeeper-client/zk-errors.js';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';
import { PRIVATE_LOCK, documentPath, indexPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { owner } from '../../unit/lock/lock-engine-suite.js';
import { EnginePool, zkSettings } from './zk-test-engines.js';

/**
 * Issue #13 item 4: with `zookeeper.auth`, every lock node is created with a creator-only ACL
 * in the create itself (no window in which it is open, no ACL error ignored): another client
 * without the credentials can neither read, create under, nor delete any of them.
 */
const connect = inject('zookeeperConnect');
const AUTH = { scheme: 'digest' as const, credentials: 'proxy:pa55' };
const pool = new EnginePool();
let stranger: RawZkConnection;
let colleague: RawZkConnection;

beforeAll(async () => {
  stranger = await connectRawClient(connect, 4_000);
  colleague = await connectRawClient(connect, 4_000);
  await colleague.client.addAuth(AUTH.scheme, AUTH.credentials);
});
afterAll(async () => {
  await stranger?.close();
  await colleague?.close();
});
afterEach(() => pool.closeAll());

async function refused(attempt: Promise<unknown>): Promise<boolean> {
  try {
    await attempt;
    return false;
  } catch (error) {
    return isZkCode(error, 'NOAUTH');
  }
}

describe('lock nodes with zookeeper.auth', () => {
  it('are created creator-only: single acquisitions, queue entries and batch transactions', async () => {
    const settings = zkSettings(connect, { auth: AUTH });
    const [a, b] = [pool.open(settings), pool.open(settings)];
    const root = normalizeRoot(settings.lockRoot);
    const single = { index: 'acl', id: 'single' };
    const held = await a.acquire(single, 'foreground', { timeoutMs: 5_000, owner: owner('a') });
    const waiting = b.acquire(single, 'background', { timeoutMs: 5_000, owner: owner('b') });
    const granted: HeldLock[] = [];
    const bulk = await a.acquireEach(
      ['x', 'y', 'z'].map((id) => ({ index: 'acl-bulk', id })),
      'background',
      { timeoutMs: 5_000, owner: owner('bulk'), onGranted: (lock) => granted.push(lock) },
    );
    expect(bulk.failed.size).toBe(0);

    const docPath = documentPath(root, single);
    await expect.poll(async () => (await colleague.client.getChildren(docPath)).length).toBe(2);
    const [entry] = (await colleague.client.getChildren(docPath)).filter((child) => child !== PRIVATE_LOCK);
    const bulkDoc = documentPath(root, { index: 'acl-bulk', id: 'y' });
    for (const path of [root, indexPath(root, 'acl'), docPath, `${docPath}/${PRIVATE_LOCK}`, `${docPath}/${entry!}`, bulkDoc, `${bulkDoc}/${PRIVATE_LOCK}`]) {
      expect(await refused(stranger.client.get(path)), `read ${path}`).toBe(true);
      // The same credentials (another proxy) can.
      await colleague.client.get(path);
    }
    expect(await refused(stranger.client.create(`${docPath}/A-`, '', 'ephemeralSequential'))).toBe(true);
    expect(await refused(stranger.client.delete(`${docPath}/${PRIVATE_LOCK}`))).toBe(true);
    expect(await refused(stranger.client.delete(`${bulkDoc}/${PRIVATE_LOCK}`))).toBe(true);

    await Promise.all(granted.map((lock) => lock.release()));
    await held.release();
    await (await waiting).release();
  });
});
