import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLock, LockKey } from '../../src/lock/lock-engine.js';
import { documentPath, normalizeRoot } from '../../src/lock/zookeeper/znode-names.js';
import { owner } from '../unit/lock/lock-engine-suite.js';
import { zkSettings } from '../integration/lock/zk-test-engines.js';
import { type ScriptedWorld, nodesUnder, scriptedWorld } from './sim-scenario.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

const ROOT = '/lingering/locks';
const KEYS: readonly LockKey[] = [
  { index: 'docs', id: 'd0' },
  { index: 'docs', id: 'd1' },
];
const DOCS = KEYS.map((key) => documentPath(normalizeRoot(ROOT), key));
const LINGER_MS = 300;

let uninstall: (() => void) | null = null;
afterEach(() => uninstall?.());

describe('a single writer that comes back', () => {
  async function grantedTwiceAndReleased(world: ScriptedWorld, keys: readonly LockKey[]): Promise<ReturnType<ScriptedWorld['engine']>> {
    const engine = world.engine();
    await world.runUntil(() => engine.state() === 'connected');
    for (let round = 0; round < 2; round++) {
      const held: HeldLock[] = [];
      // In one turn of the event loop: single acquisitions of one turn go out as one transaction.
      for (const key of keys) void engine.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner(`round ${round}`) }).then((lock) => held.push(lock));
      await world.runUntil(() => held.length === keys.length);
      for (const lock of held) void lock.release();
      await world.runTo(world.clock.now() + LINGER_MS / 10);
    }
    return engine;
  }

  /** Its document comes back within the linger window: the lock lingers, and the next write takes it without ZooKeeper. */
  it('keeps its lock a moment and takes it again locally', async () => {
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: LINGER_MS, documentCleanup: 'reaper' }));
    uninstall = world.uninstall;
    const engine = await grantedTwiceAndReleased(world, [KEYS[0]!]);
    expect(nodesUnder(world, DOCS[0]!).map((node) => node.name)).toEqual(['privateLock']);
    let again: HeldLock | null = null;
    void engine.acquire(KEYS[0]!, 'foreground', { timeoutMs: 5_000, owner: owner('again') }).then((lock) => (again = lock));
    await world.runUntil(() => again !== null);
    expect((again as HeldLock | null)!.handedOverLocally).toBe(true);
    await world.runTo(world.clock.now() + 2 * LINGER_MS);
  });

  /** Single acquisitions of one turn share a transaction, and still linger as single ones do. */
  it('keeps its locks a moment when its acquisitions went out together', async () => {
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: LINGER_MS, documentCleanup: 'reaper' }));
    uninstall = world.uninstall;
    await grantedTwiceAndReleased(world, KEYS);
    expect(DOCS.map((doc) => nodesUnder(world, doc).map((node) => node.name))).toEqual([['privateLock'], ['privateLock']]);
  });

  /**
   * A document found contended skips the fast path for a while (it queues at once, where the fast
   * path would mostly find the lock taken); once that hint has expired, an uncontended write takes
   * the fast path again: no queue entry, one transaction.
   */
  it('takes the fast path again once a contention seen earlier is past', async () => {
    const lines: string[] = [];
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0, documentCleanup: 'reaper' }), { trace: (line) => lines.push(line) });
    uninstall = world.uninstall;
    const engine = world.engine();
    const other = world.engine();
    await world.runUntil(() => engine.state() === 'connected' && other.state() === 'connected');
    const acquire = (on: typeof engine, name: string): { held: HeldLock | null } => {
      const slot: { held: HeldLock | null } = { held: null };
      void on.acquire(KEYS[0]!, 'foreground', { timeoutMs: 5_000, owner: owner(name) }).then((lock) => (slot.held = lock));
      return slot;
    };
    const elsewhere = acquire(other, 'elsewhere');
    await world.runUntil(() => elsewhere.held !== null);
    const contended = acquire(engine, 'contended');
    await world.runUntil(() => lines.some((line) => line.startsWith(`e0 sends create ${DOCS[0]}/A-`)));
    void elsewhere.held!.release();
    await world.runUntil(() => contended.held !== null);
    void contended.held!.release();
    await world.runTo(world.clock.now() + 5_000);

    const from = lines.length;
    const later = acquire(engine, 'later');
    await world.runUntil(() => later.held !== null);
    expect(lines.slice(from).filter((line) => line.startsWith('e0 sends') && line.includes(`${DOCS[0]}/A-`))).toEqual([]);
  });
});
