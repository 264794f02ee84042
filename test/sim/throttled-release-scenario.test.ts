import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLock, LockKey } from '../../src/lock/lock-engine.js';
import { documentPath, normalizeRoot, privateLockPath } from '../../src/lock/zookeeper/znode-names.js';
import { owner } from '../unit/lock/lock-engine-suite.js';
import { zkSettings } from '../integration/lock/zk-test-engines.js';
import { scriptedWorld } from './sim-scenario.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

const ROOT = '/throttled/locks';
const KEY: LockKey = { index: 'docs', id: 'd0' };
const PRIVATE_LOCK = privateLockPath(documentPath(normalizeRoot(ROOT), KEY));
const REFUSALS = 3;

let uninstall: (() => void) | null = null;
afterEach(() => uninstall?.());

/**
 * A release whose transaction the server refuses as a whole (THROTTLEDOP: "try again later"),
 * scripted on the simulated ZooKeeper. It is tried again, never dropped — and later each time (100
 * ms after the first refusal, 200 after the second, …): sent again at once, it would add to the load
 * the server is shedding.
 */
describe('a release refused as a whole request', () => {
  it('is sent again after a pause that grows with each refusal, until it goes through', async () => {
    let refuseReleases = false;
    let refused = 0;
    const sentAt: number[] = [];
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0, documentCleanup: 'reaper' }), {
      trace: (line) => {
        if (line.startsWith('e0 sends multi[') && line.includes(`delete ${PRIVATE_LOCK}`)) sentAt.push(world.clock.now());
      },
      throttled: () => refuseReleases && refused++ < REFUSALS,
    });
    uninstall = world.uninstall;
    const engine = world.engine();
    await world.runUntil(() => engine.state() === 'connected');
    let held: HeldLock | null = null;
    void engine.acquire(KEY, 'foreground', { timeoutMs: 5_000, owner: owner('holder') }).then((lock) => (held = lock));
    await world.runUntil(() => held !== null);

    refuseReleases = true;
    void (held as HeldLock | null)!.release();
    await world.runUntil(() => world.server.ephemeralsUnder(documentPath(normalizeRoot(ROOT), KEY)).length === 0);

    expect(sentAt).toHaveLength(REFUSALS + 1);
    const gaps = sentAt.slice(1).map((at, i) => at - sentAt[i]!);
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(100 * (i + 1)));
  });
});
