import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLock, LockKey } from '../../src/lock/lock-engine.js';
import { lockEvents } from '../../src/lock/lock-events.js';
import { documentPath, normalizeRoot, privateLockPath } from '../../src/lock/zookeeper/znode-names.js';
import { owner } from '../unit/lock/lock-engine-suite.js';
import { zkSettings } from '../integration/lock/zk-test-engines.js';
import { nodesUnder, scriptedWorld } from './sim-scenario.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

const ROOT = '/holder-watch/locks';
const KEY: LockKey = { index: 'docs', id: 'd0' };
const DOC = documentPath(normalizeRoot(ROOT), KEY);
const SLOW_MS = 100;

let uninstall: (() => void) | null = null;
afterEach(() => uninstall?.());

/**
 * A holder watch whose read is slow, scripted on the simulated ZooKeeper: while the read travels,
 * an operator deletes the holder's privateLock and its emptied document node by hand, and another
 * process takes the document — creating the node again, whose data version (the owner token)
 * starts over and equals the first holder's. The first holder then releases. Its watch has not
 * heard from the server yet, so it vouches for nothing: the release waits for the read, which
 * finds the node gone, and deletes nothing. Trusted at once, the release reached the server
 * behind the read and deleted the second holder's privateLock by name, its owner check passing.
 * Found by the million-seed run (seed 800373, a narrow request gate holding the read back), whose
 * schedule no longer takes this path.
 */
describe('a release before its holder watch has read privateLock', () => {
  it('leaves another process\'s privateLock on a re-created document alone', async () => {
    let slow = false;
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0 }), { latency: () => (slow ? SLOW_MS : 1) });
    uninstall = world.uninstall;
    const { clients, server, runUntil, runTo, clock } = world;
    const first = world.engine();
    const second = world.engine();
    await runUntil(() => first.state() === 'connected' && second.state() === 'connected');

    let firstHeld: HeldLock | null = null;
    slow = true;
    void first.acquire(KEY, 'foreground', { timeoutMs: 5_000, owner: owner('first') }).then((lock) => (firstHeld = lock));
    await runUntil(() => firstHeld !== null);
    // The holder watch's read went out with the grant, slow; what follows is fast.
    slow = false;
    server.delete(privateLockPath(DOC), -1);
    server.delete(DOC, -1);
    let secondHeld: HeldLock | null = null;
    void second.acquire(KEY, 'foreground', { timeoutMs: 5_000, owner: owner('second') }).then((lock) => (secondHeld = lock));
    await runUntil(() => secondHeld !== null);

    let released = false;
    void (firstHeld as HeldLock | null)!.release().then(() => (released = true));
    await runUntil(() => released);
    await runTo(clock.now() + 4 * SLOW_MS);

    expect(nodesUnder(world, DOC)).toEqual([
      { name: 'privateLock', owner: clients[1]!.sessionId },
    ]);
    expect((secondHeld as HeldLock | null)!.isLost).toBe(false);
  });

  /**
   * The documented window itself: the holder's watch has read its node, and the deletion's event
   * is on its way when the holder releases. The release's transaction is refused whole — by its
   * owner check when the next holder's grant moved the document's version, by the delete itself
   * when nobody took the document — so nothing is deleted, and the lock is reported lost at its
   * release.
   */
  it.each([
    ['its owner check, the next holder granted meanwhile', true],
    ['the delete of privateLock, nobody having taken the document', false],
  ])('is refused by %s, the deletion\'s event not yet at the holder', async (_name, nextHolder) => {
    const slow = new Set<string>();
    const lostAtRelease: string[] = [];
    // The reaper, not the release, deletes document nodes: the owner check is the transaction's own `check`.
    const settings = zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0, documentCleanup: 'reaper' });
    const world = scriptedWorld(settings, { latency: (client) => (client !== undefined && slow.has(client) ? SLOW_MS : 1) });
    uninstall = world.uninstall;
    const { clients, server, runUntil, runTo, clock } = world;
    const first = world.engine({ events: lockEvents({ lostAtRelease: (e) => lostAtRelease.push(e.key.id) }) });
    const second = world.engine();
    await runUntil(() => first.state() === 'connected' && second.state() === 'connected');
    let firstHeld: HeldLock | null = null;
    void first.acquire(KEY, 'foreground', { timeoutMs: 5_000, owner: owner('first') }).then((lock) => (firstHeld = lock));
    await runUntil(() => firstHeld !== null);
    await runTo(clock.now() + 10);

    slow.add('e0');
    server.delete(privateLockPath(DOC), -1);
    let secondHeld: HeldLock | null = null;
    if (nextHolder) {
      void second.acquire(KEY, 'foreground', { timeoutMs: 5_000, owner: owner('second') }).then((lock) => (secondHeld = lock));
      await runUntil(() => secondHeld !== null);
    }
    void (firstHeld as HeldLock | null)!.release();
    await runTo(clock.now() + 4 * SLOW_MS);

    expect(nodesUnder(world, DOC)).toEqual(nextHolder ? [{ name: 'privateLock', owner: clients[1]!.sessionId }] : []);
    expect(lostAtRelease).toEqual([KEY.id]);
  });
});
