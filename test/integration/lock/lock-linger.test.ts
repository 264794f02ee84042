import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LockEngine } from '../../../src/lock/lock-engine.js';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';
import { documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
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

/**
 * Two requests of `engine` for `key` at once, the second handed the lock by the first: a
 * document this process wants again and again, whose lock then lingers. Returns the token.
 */
async function writtenTwiceAtOnce(engine: LockEngine, key: { index: string; id: string }): Promise<number> {
  const first = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('first') });
  const waiting = engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('second') });
  await first.release();
  const second = await waiting;
  expect(second.handedOverLocally).toBe(true);
  await second.release();
  return first.fencingToken;
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
    const token = await writtenTwiceAtOnce(engine, key);
    expect(await privateLockCzxid(settings.lockRoot, key)).toBe(token);
    const next = await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('next') });
    expect(next.handedOverLocally).toBe(true);
    expect(next.fencingToken).toBe(token);
    expect(next.usable()).toBe(true);
    await next.release();
  });

  it('is kept for a document written one request after the other, when it comes back within the window', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const engine = pool.open(settings);
    const key = { index: 'linger', id: 'sequential' };
    const first = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('first') });
    await first.release();
    const second = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('second') });
    await second.release();
    const third = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('third') });
    expect(third.handedOverLocally).toBe(true);
    expect(third.fencingToken).toBe(second.fencingToken);
    await third.release();
  });

  it('is not kept for a document written once (an uncontended write pays no watch and no timer)', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const engine = pool.open(settings);
    const key = { index: 'linger', id: 'once' };
    const held = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('only') });
    await held.release();
    await waitFor(async () => (await privateLockCzxid(settings.lockRoot, key)) === null);
  });

  it('is given back when its time is over', async () => {
    const settings = zkSettings(connect, { lingerMs: 100 });
    const engine = pool.open(settings);
    const key = { index: 'linger', id: 'timer' };
    const token = await writtenTwiceAtOnce(engine, key);
    await waitFor(async () => (await privateLockCzxid(settings.lockRoot, key)) === null);
    const next = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('next') });
    expect(next.handedOverLocally).toBe(false);
    expect(next.fencingToken).toBeGreaterThan(token);
    await next.release();
  });

  it('is given up as soon as another process queues for the document', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const [lingering, other] = [pool.open(settings), pool.open(settings)];
    const key = { index: 'linger', id: 'other-process' };
    const token = await writtenTwiceAtOnce(lingering, key);
    expect(await privateLockCzxid(settings.lockRoot, key)).toBe(token);
    // Times out (LockTimeoutError after 5 s) when the lingering process keeps the lock to itself.
    const taken = await other.acquire(key, 'background', { timeoutMs: 5_000, owner: owner('other') });
    expect(taken.handedOverLocally).toBe(false);
    expect(taken.fencingToken).toBeGreaterThan(token);
    await taken.release();
  });

  it('is given up for a client of the original algorithm queued on the same znodes', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const engine = pool.open(settings);
    const key = { index: 'linger', id: 'seed' };
    expect(await privateLockCzxid(settings.lockRoot, key)).toBe(null);
    const token = await writtenTwiceAtOnce(engine, key);
    expect(await privateLockCzxid(settings.lockRoot, key)).toBe(token);
    const seed = new SeedAlgorithmClient(raw.client, documentPath(normalizeRoot(settings.lockRoot), key), 'B');
    const entry = await seed.lock();
    expect((await raw.client.get(privateLockPath(settings.lockRoot, key))).stat.ephemeralOwner).toBe(raw.client.sessionId);
    await seed.unlock(entry);
  });

  it('is not handed on after an operator force-released it', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const [engine, operator] = [pool.open(settings), pool.open(settings)];
    const key = { index: 'linger', id: 'forced' };
    const token = await writtenTwiceAtOnce(engine, key);
    expect(await operator.forceRelease(key)).toBe(true);
    // One round trip on the lingering engine's session: ZooKeeper delivers that session's watch
    // events (privateLock deleted) before the answer.
    await engine.inspect(key);
    const next = await engine.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('next') });
    expect(next.handedOverLocally).toBe(false);
    expect(next.fencingToken).toBeGreaterThan(token);
    await next.release();
  });

  it('is not kept for the keys of a bulk (no watches for a thousand idle locks)', async () => {
    const settings = zkSettings(connect, { lingerMs: LONG_LINGER_MS });
    const engine = pool.open(settings);
    const keys = ['1', '2', '3'].map((id) => ({ index: 'linger-bulk', id }));
    // Twice: the second time the keys came back within the window, which alone would make them linger.
    for (const round of ['first', 'second']) {
      const held: { release(): Promise<void> }[] = [];
      const result = await engine.acquireEach(keys, 'background', { timeoutMs: 2_000, owner: owner(round), onGranted: (lock) => held.push(lock) });
      expect(result.failed.size).toBe(0);
      await Promise.all(held.map((lock) => lock.release()));
    }
    for (const key of keys) await waitFor(async () => (await privateLockCzxid(settings.lockRoot, key)) === null);
  });
});
