import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLock, LockKey } from '../../src/lock/lock-engine.js';
import { documentPath, normalizeRoot, privateLockPath } from '../../src/lock/zookeeper/znode-names.js';
import { owner } from '../unit/lock/lock-engine-suite.js';
import { zkSettings } from '../integration/lock/zk-test-engines.js';
import { type ScriptedWorld, nodesUnder, scriptedWorld } from './sim-scenario.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

const ROOT = '/bulk-key/locks';
const KEYS: readonly LockKey[] = [
  { index: 'docs', id: 'd0' },
  { index: 'docs', id: 'd1' },
];
const DOCS = KEYS.map((key) => documentPath(normalizeRoot(ROOT), key));
const LINGER_MS = 300;

let uninstall: (() => void) | null = null;
afterEach(() => uninstall?.());

/** A bulk of `KEYS` granted in one transaction on `engine` (no holder watch: a bulk's keys have none). */
async function bulkOf(world: ScriptedWorld, engine: ReturnType<ScriptedWorld['engine']>): Promise<HeldLock[]> {
  const held: HeldLock[] = [];
  void engine.acquireEach(KEYS, 'background', { timeoutMs: 5_000, owner: owner('bulk'), onGranted: (lock) => held.push(lock) });
  await world.runUntil(() => held.length === KEYS.length);
  return held;
}

describe('a bulk\'s keys', () => {
  /**
   * An operator deletes a bulk key's privateLock by hand while the bulk holds it, the emptied
   * document node is deleted too, and another process takes the document — creating the node
   * again, whose data version (the owner token) starts over and equals the bulk's. No watch told
   * the bulk. Its release lists the session's nodes first and deletes only a privateLock that is
   * still among them; deleted by name, the owner check passing, it took the other holder's.
   */
  it.each([
    ['with its link up', false],
    ['released while its link is down, sent once it is back', true],
  ])('release a privateLock only after a listing shows it still theirs (%s)', async (_name, linkDown) => {
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0, documentCleanup: 'reaper' }));
    uninstall = world.uninstall;
    const bulkEngine = world.engine();
    const other = world.engine();
    await world.runUntil(() => bulkEngine.state() === 'connected' && other.state() === 'connected');
    const bulk = await bulkOf(world, bulkEngine);

    world.server.delete(privateLockPath(DOCS[0]!), -1);
    world.server.delete(DOCS[0]!, -1);
    let otherHeld: HeldLock | null = null;
    void other.acquire(KEYS[0]!, 'foreground', { timeoutMs: 5_000, owner: owner('other') }).then((lock) => (otherHeld = lock));
    await world.runUntil(() => otherHeld !== null);

    if (linkDown) {
      // Noticed after 5 ms, back within the session after 200 ms.
      world.clients[0]!.silence(5, 200, 60_000, 0);
      await world.runUntil(() => bulkEngine.state() !== 'connected');
    }
    for (const lock of bulk) void lock.release();
    await world.runUntil(() => nodesUnder(world, DOCS[1]!).length === 0);
    await world.runTo(world.clock.now() + 50);

    expect(nodesUnder(world, DOCS[0]!)).toEqual([{ name: 'privateLock', owner: world.clients[1]!.sessionId }]);
    expect((otherHeld as HeldLock | null)!.isLost).toBe(false);
  });

  /**
   * Lingering is for a single writer that comes back: a bulk's keys go with their release, however
   * soon the same documents come back in the next bulk.
   */
  it('do not linger after their release, however soon the next bulk comes', async () => {
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: LINGER_MS, documentCleanup: 'reaper' }));
    uninstall = world.uninstall;
    const engine = world.engine();
    await world.runUntil(() => engine.state() === 'connected');
    for (let round = 0; round < 3; round++) {
      const bulk = await bulkOf(world, engine);
      const releasedAt = world.clock.now();
      for (const lock of bulk) void lock.release();
      await world.runUntil(() => DOCS.every((doc) => nodesUnder(world, doc).length === 0));
      expect(world.clock.now() - releasedAt).toBeLessThan(LINGER_MS / 10);
    }
  });

  /** A bulk of one key is a single write: its lock is watched at the grant, as a single write's is. */
  it('watch their privateLock when the bulk has one key, as a single write does', async () => {
    const lines: string[] = [];
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0, documentCleanup: 'reaper' }), { trace: (line) => lines.push(line) });
    uninstall = world.uninstall;
    const engine = world.engine();
    await world.runUntil(() => engine.state() === 'connected');
    const held: HeldLock[] = [];
    void engine.acquireEach([KEYS[0]!], 'background', { timeoutMs: 5_000, owner: owner('bulk of one'), onGranted: (lock) => held.push(lock) });
    await world.runUntil(() => held.length === 1);
    await world.runTo(world.clock.now() + 10);
    expect(lines.filter((line) => line.startsWith(`e0 sends existsWatched ${privateLockPath(DOCS[0]!)}`))).toHaveLength(1);
  });

  /** Once the contention seen on its documents has expired, a bulk takes them in one transaction again. */
  it('share one transaction again once a contention seen on them is past', async () => {
    const lines: string[] = [];
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0, documentCleanup: 'reaper' }), { trace: (line) => lines.push(line) });
    uninstall = world.uninstall;
    const engine = world.engine();
    const other = world.engine();
    await world.runUntil(() => engine.state() === 'connected' && other.state() === 'connected');
    const inOneTurn = async (on: typeof engine, name: string): Promise<HeldLock[]> => {
      const held: HeldLock[] = [];
      for (const key of KEYS) void on.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner(name) }).then((lock) => held.push(lock));
      await world.runUntil(() => held.length === KEYS.length);
      return held;
    };
    // Contended: the other process holds both documents while this one asks for them.
    const elsewhere = await inOneTurn(other, 'elsewhere');
    const contended: HeldLock[] = [];
    for (const key of KEYS) void engine.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('contended') }).then((lock) => contended.push(lock));
    await world.runTo(world.clock.now() + 20);
    for (const lock of elsewhere) void lock.release();
    await world.runUntil(() => contended.length === KEYS.length);
    for (const lock of contended) void lock.release();
    await world.runTo(world.clock.now() + 5_000);

    const from = lines.length;
    await bulkOf(world, engine);
    const creates = lines.slice(from).filter((line) => line.startsWith('e0 sends multi[') && line.includes('/privateLock'));
    expect(creates).toHaveLength(1);
    expect(DOCS.every((doc) => creates[0]!.includes(privateLockPath(doc)))).toBe(true);
  });
});
