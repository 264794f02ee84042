import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLock, LockKey } from '../../src/lock/lock-engine.js';
import { documentPath, normalizeRoot, privateLockPath } from '../../src/lock/zookeeper/znode-names.js';
import { owner } from '../unit/lock/lock-engine-suite.js';
import { zkSettings } from '../integration/lock/zk-test-engines.js';
import { scriptedWorld } from './sim-scenario.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

const ROOT = '/hand-over/locks';
const KEY: LockKey = { index: 'docs', id: 'd0' };
const DOC = documentPath(normalizeRoot(ROOT), KEY);
const MAX_COUNT = 8;
const WRITES = 5 * MAX_COUNT;

let uninstall: (() => void) | null = null;
afterEach(() => uninstall?.());

/**
 * A hot document written by one process only, scripted on the simulated ZooKeeper: its writes
 * pass the lock between them (local hand-over). The hand-over bound counts passes since the
 * latest read of the queue that showed nobody else; half-way through it the process reads the
 * queue again, and finding nobody, goes on passing — so a document nobody else wants is passed on
 * for as long as its writes come, on one ZooKeeper grant, with one read per half bound.
 */
describe('a hot document nobody else wants', () => {
  it('is passed on locally write after write, on one grant, reading the queue again half-way through each bound', async () => {
    const lines: string[] = [];
    const settings = zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0, documentCleanup: 'reaper', handOverMaxCount: MAX_COUNT, handOverMaxMs: 10_000 });
    const world = scriptedWorld(settings, { trace: (line) => lines.push(line) });
    uninstall = world.uninstall;
    const engine = world.engine();
    await world.runUntil(() => engine.state() === 'connected');

    const granted: HeldLock[] = [];
    for (let i = 0; i < WRITES; i++) {
      void engine.acquire(KEY, 'foreground', { timeoutMs: 60_000, owner: owner(`write ${i}`) }).then((lock) => {
        granted.push(lock);
        // Each write holds the lock for 2 ms of virtual time, the next one waiting.
        setTimeout(() => void lock.release(), 2);
      });
    }
    await world.runUntil(() => granted.length === WRITES);

    const sent = lines.filter((line) => line.startsWith('e0 sends'));
    expect(sent.filter((line) => line.includes(`create ${privateLockPath(DOC)}`))).toHaveLength(1);
    expect(sent.filter((line) => line.includes(`${DOC}/A-`) || line.includes(`${DOC}/B-`))).toEqual([]);
    expect(granted.filter((lock) => lock.handedOverLocally)).toHaveLength(WRITES - 1);
    // About one read per half bound (passes during a read's round trip count towards the next):
    // more than one per bound, far fewer than one per pass.
    const reads = sent.filter((line) => line.startsWith(`e0 sends children ${DOC}`) || line.startsWith(`e0 sends childrenWatched ${DOC}`)).length;
    expect(reads).toBeGreaterThan(WRITES / MAX_COUNT);
    expect(reads).toBeLessThan(WRITES / 2);
  });
});
