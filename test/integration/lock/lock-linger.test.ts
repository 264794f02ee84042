import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RawZkConnection, connectRawClient } from '../../../src/lock/zk-raw-client.js';
import { documentPath, normalizeRoot } from '../../../src/lock/znode-names.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';
import { SeedAlgorithmClient } from './seed-algorithm-client.js';
import { EnginePool, zkSettings } from './zk-test-engines.js';

/**
 * `zookeeper.lock.linger.ms`: a document lock whose last local request released it stays with
 * the process for a while, so that the process's next request for the document takes it
 * without ZooKeeper; anybody else queuing for it ends that at once.
 */
const connect = inject('zookeeperConnect');
const pool = new EnginePool();
/** Far longer than any test here: whatever gives such a lock up early is not the timer. */
const LONG_LINGER_MS = 600_000;
let raw: RawZkConnection;

beforeAll(async () => {
  raw = await connectRawClient(connect, 4_000);
});
afterAll(() => raw?.close());
afterEach(() => pool.closeAll());

function privateLockPath(lockRoot: string, key: { index: string; id: string }): string {
  return `${documentPath(normalizeRoot(lockRoot), key)}/privateLock`;
}

async function privateLockCzxid(lockRoot: string, key: { index: string; id: string }): Promise<number | null> {
  const node = await raw.client.get(privateLockPath(lockRoot, key)).catch(() => null);
  return node?.stat.czxid ?? null;
}

describe('a lingering lock', () => {
  it('is taken by the next request of the same process without ZooKeeper, on the same privateLock', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const engine = pool.open(settings);
    const key = { index: 'linger', id: 'again' };
    const first = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('first') });
    await first.release();
    expect(await privateLockCzxid(settings.lockRoot, key)).toBe(first.fencingToken);
    const second = await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('second') });
    expect(second.handedOverLocally).toBe(true);
    expect(second.fencingToken).toBe(first.fencingToken);
    expect(second.usable()).toBe(true);
    await second.release();
  });

  it('is given back when its time is over', async () => {
    const settings = zkSettings(connect, { lingerMs: 100 });
    const engine = pool.open(settings);
    const key = { index: 'linger', id: 'timer' };
    const held = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('only') });
    await held.release();
    await waitFor(async () => (await privateLockCzxid(settings.lockRoot, key)) === null);
    const next = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('next') });
    expect(next.handedOverLocally).toBe(false);
    expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
    await next.release();
  });

  it('is given up as soon as another process queues for the document', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const [lingering, other] = [pool.open(settings), pool.open(settings)];
    const key = { index: 'linger', id: 'other-process' };
    const held = await lingering.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('lingering') });
    await held.release();
    // Times out (LockTimeoutError after 5 s) when the lingering process keeps the lock to itself.
    const taken = await other.acquire(key, 'background', { timeoutMs: 5_000, owner: owner('other') });
    expect(taken.handedOverLocally).toBe(false);
    expect(taken.fencingToken).toBeGreaterThan(held.fencingToken);
    await taken.release();
  });

  it('is given up for a client of the original algorithm queued on the same znodes', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const engine = pool.open(settings);
    const key = { index: 'linger', id: 'seed' };
    const held = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('lingering') });
    await held.release();
    const seed = new SeedAlgorithmClient(raw.client, documentPath(normalizeRoot(settings.lockRoot), key), 'B');
    const entry = await seed.lock();
    expect((await raw.client.get(privateLockPath(settings.lockRoot, key))).stat.ephemeralOwner).toBe(raw.client.sessionId);
    await seed.unlock(entry);
  });

  it('is not handed on after an operator force-released it', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const [engine, operator] = [pool.open(settings), pool.open(settings)];
    const key = { index: 'linger', id: 'forced' };
    const held = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('lingering') });
    await held.release();
    expect(await operator.forceRelease(key)).toBe(true);
    // One round trip on the lingering engine's session: ZooKeeper delivers that session's watch
    // events (privateLock deleted) before the answer.
    await engine.inspect(key);
    const next = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('next') });
    expect(next.handedOverLocally).toBe(false);
    expect(next.fencingToken).toBeGreaterThan(held.fencingToken);
    await next.release();
  });

  it('is not kept for the keys of a bulk (no watches for a thousand idle locks)', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const engine = pool.open(settings);
    const keys = ['1', '2', '3'].map((id) => ({ index: 'linger-bulk', id }));
    const held: { release(): Promise<void> }[] = [];
    const result = await engine.acquireEach(keys, 'background', { timeoutMs: 2_000, owner: owner('bulk'), onGranted: (lock) => held.push(lock) });
    expect(result.failed.size).toBe(0);
    await Promise.all(held.map((lock) => lock.release()));
    for (const key of keys) await waitFor(async () => (await privateLockCzxid(settings.lockRoot, key)) === null);
  });
});
