import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLock, LockKey } from '../../src/lock/lock-engine.js';
import { documentPath, normalizeRoot } from '../../src/lock/zookeeper/znode-names.js';
import type { ZooKeeperLockEngine } from '../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { owner } from '../unit/lock/lock-engine-suite.js';
import { zkSettings } from '../integration/lock/zk-test-engines.js';
import { type ScriptedWorld, scriptedWorld } from './sim-scenario.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

const ROOT = '/late-grant/locks';
const KEY: LockKey = { index: 'docs', id: 'd0' };
const DOC = documentPath(normalizeRoot(ROOT), KEY);

let uninstall: (() => void) | null = null;
afterEach(() => uninstall?.());

/**
 * A privateLock create whose answer comes after the request it was for gave up, scripted on the
 * simulated ZooKeeper: a foreground request takes the fast path (the queue read, then the create),
 * times out while the create travels, another process queues a foreground entry, and a background
 * request of the same engine arrives before the create's answer. The answer makes privateLock ours;
 * the background request arrived after the read that placed it, so it is served only once a fresh
 * read shows nobody before it — here the entry shows, and privateLock goes back to the queue.
 *
 * Network delays are scripted: 1 ms each, except the ones `slow` lists, drawn in order.
 */
async function lateGrant(slow: readonly number[]): Promise<{ readonly world: ScriptedWorld; readonly engine: ZooKeeperLockEngine; readonly background: { held: HeldLock | null }; readonly foreground: () => string }> {
  const delays: number[] = [];
  const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0, documentCleanup: 'reaper' }), { latency: () => delays.shift() ?? 1 });
  uninstall = world.uninstall;
  const { clock, clients, server, runUntil, runTo } = world;
  const engine = world.engine();
  const elsewhere = world.engine();
  await runUntil(() => engine.state() === 'connected' && elsewhere.state() === 'connected');
  // The document exists and nobody wants it: the next acquisition is the fast path.
  let warm: HeldLock | null = null;
  void engine.acquire(KEY, 'foreground', { timeoutMs: 1_000, owner: owner('warm') }).then((lock) => (warm = lock));
  await runUntil(() => warm !== null);
  void (warm as HeldLock | null)?.release();
  await runUntil(() => server.ephemeralsUnder(DOC).length === 0);

  const start = clock.now();
  delays.push(...slow);
  let foreground = 'waiting';
  void engine.acquire(KEY, 'foreground', { timeoutMs: 20, owner: owner('foreground') }).then(
    () => (foreground = 'granted'),
    () => (foreground = 'gave up'),
  );
  await runTo(start + 5);
  server.create(clients[1]!.sessionId, `${DOC}/A-`, '', 'ephemeralSequential');
  await runTo(start + 30);
  const background: { held: HeldLock | null } = { held: null };
  void engine.acquire(KEY, 'background', { timeoutMs: 5_000, owner: owner('background') }).then((lock) => (background.held = lock));
  return { world, engine, background, foreground: () => foreground };
}

/** privateLock's owner and every entry under the document, in the server's words. */
function nodesUnder(world: ScriptedWorld): string[] {
  return world.server.ephemeralsUnder(DOC).map((node) => `${node.path.slice(DOC.length + 1).replace(/\d+$/, '')} of ${node.owner === world.clients[0]!.sessionId ? 'e0' : 'e1'}`);
}

describe('a late-answered privateLock is not given to a background request past another process\'s foreground entry', () => {
  it('when the entry queued after the read and before the create reached the server', async () => {
    // The read is processed at +1, the create at +50: the entry (+5) falls between them.
    const { world, background, foreground } = await lateGrant([1, 50]);
    await world.runTo(world.clock.now() + 100);
    expect(background.held).toBeNull();
    expect(nodesUnder(world).sort()).toEqual(['A- of e1', 'B- of e0']);
    // The other process's writer done: the background request is next.
    world.server.delete(world.server.ephemeralsUnder(DOC).find((node) => node.path.includes('/A-'))!.path, -1);
    await world.runUntil(() => background.held !== null);
    expect(background.held!.handedOverLocally).toBe(false);
    await world.runUntil(() => foreground() === 'gave up');
  });

  it('when the create reached the server first and only its answer was late', async () => {
    // Read and create are processed at +1 and +3, before the entry (+5); the create's answer takes 60 ms.
    const { world, background, foreground } = await lateGrant([1, 3, 1, 60]);
    await world.runTo(world.clock.now() + 100);
    expect(background.held).toBeNull();
    expect(nodesUnder(world).sort()).toEqual(['A- of e1', 'B- of e0']);
    await world.runUntil(() => foreground() === 'gave up');
  });
});
