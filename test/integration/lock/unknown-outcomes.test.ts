import { describe, expect, it } from 'vitest';
import type { HeldLock } from '../../../src/lock/lock-engine.js';
import { parseNodeData } from '../../../src/lock/lock-node-data.js';
import { childrenOrEmpty } from '../../../src/zookeeper-client/zk-client.js';
import { ZK_RC } from '../../../src/zookeeper-client/zk-errors.js';
import { documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import type { TcpForwarder } from '../../support/tcp-forwarder.js';
import { ZK_OPCODE } from '../../support/zookeeper-frames.js';
import { owner } from '../../unit/lock/lock-engine-suite.js';
import type { ZooKeeperLockEngine } from '../../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { useLockFixture, zkSettings } from './zk-test-engines.js';

/**
 * The server applies the transaction that creates our privateLock; the client is told something
 * that does not say whether it was applied. Only a code the server returns for a request it
 * refused proves nothing was: anything else is reconciled (our nodes found by owner session and
 * guid), never taken as a refusal — which left the privateLock with nobody for as long as the
 * session lived.
 */
const UNKNOWN_OUTCOMES = [
  ['RUNTIMEINCONSISTENCY', ZK_RC.RUNTIMEINCONSISTENCY],
  ['OPERATIONTIMEOUT', ZK_RC.OPERATIONTIMEOUT],
  ['SYSTEMERROR', ZK_RC.SYSTEMERROR],
] as const;

const fixture = useLockFixture();

async function engineBehindRelay(): Promise<{ engine: ZooKeeperLockEngine; link: TcpForwarder; root: string }> {
  const settings = zkSettings(fixture.connect);
  const link = await fixture.link();
  return { engine: fixture.pool.open({ ...settings, servers: link.connectString }), link, root: normalizeRoot(settings.lockRoot) };
}

describe('a transaction the server applied, answered with a code that does not say so', () => {
  it.each(UNKNOWN_OUTCOMES)('%s: the single acquisition finds its privateLock and holds it', async (_name, rc) => {
    const { engine, link, root } = await engineBehindRelay();
    const key = { index: 'unknown', id: `single-${rc}` };
    const docPath = documentPath(root, key);
    const answered = link.answerWithError([ZK_OPCODE.multi], rc);
    const held = await engine.acquire(key, 'foreground', { timeoutMs: 10_000, owner: owner('applied') });
    await answered;
    expect(await fixture.raw.client.getChildren(docPath)).toEqual(['privateLock']);
    expect(parseNodeData((await fixture.raw.client.get(`${docPath}/privateLock`)).data).owner?.requestId).toBe('applied');
    await held.release();
    expect(await childrenOrEmpty(fixture.raw.client, docPath)).toEqual([]);
    // And the document is free for the next writer.
    await (await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('next') })).release();
  });

  it.each(UNKNOWN_OUTCOMES)('%s: a batch of keys finds its privateLocks and holds every key', async (_name, rc) => {
    const { engine, link, root } = await engineBehindRelay();
    const keys = ['a', 'b', 'c'].map((id) => ({ index: 'unknown', id: `batch-${rc}-${id}` }));
    const answered = link.answerWithError([ZK_OPCODE.multi], rc);
    const granted: HeldLock[] = [];
    const result = await engine.acquireEach(keys, 'foreground', { timeoutMs: 10_000, owner: owner('batch'), onGranted: (lock) => granted.push(lock) });
    await answered;
    expect([...result.failed.values()].map((failure) => failure.error.message)).toEqual([]);
    expect(granted).toHaveLength(keys.length);
    for (const key of keys) expect(await fixture.raw.client.getChildren(documentPath(root, key))).toEqual(['privateLock']);
    await Promise.all(granted.map((lock) => lock.release()));
    for (const key of keys) expect(await childrenOrEmpty(fixture.raw.client, documentPath(root, key))).toEqual([]);
  });
});
