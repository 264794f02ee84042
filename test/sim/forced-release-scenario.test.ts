import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLock, LockKey } from '../../src/lock/lock-engine.js';
import { documentPath, normalizeRoot, privateLockPath } from '../../src/lock/zookeeper/znode-names.js';
import { owner } from '../unit/lock/lock-engine-suite.js';
import { zkSettings } from '../integration/lock/zk-test-engines.js';
import { scriptedWorld } from './sim-scenario.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

const ROOT = '/forced/locks';
const KEY: LockKey = { index: 'docs', id: 'd0' };
const NEIGHBOUR: LockKey = { index: 'docs', id: 'd1' };
const DOC = documentPath(normalizeRoot(ROOT), KEY);
const PRIVATE_LOCK = privateLockPath(DOC);

let uninstall: (() => void) | null = null;
afterEach(() => uninstall?.());

/**
 * A lock force-released by an operator, scripted on the simulated ZooKeeper: its holder learns of it
 * — at once when the forced release went through its own process, from the forced-release epoch's
 * watch and a read of `privateLock` when it went through another — and counts the lock lost. Its
 * release then deletes nothing by that name: the name may be the next holder's already, and a
 * transaction that tried would only be refused by its owner check and verified again.
 */
describe('a lock force-released while held', () => {
  /** `bulk`: KEY held as a bulk's key (granted with another in one transaction; no holder watch). */
  async function heldThenForced(through: 'holder' | 'other', as: 'single' | 'bulk' = 'single'): Promise<{ readonly sentAfterForce: () => string[] }> {
    const lines: string[] = [];
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0, documentCleanup: 'reaper' }), { trace: (line) => lines.push(line) });
    uninstall = world.uninstall;
    const holder = world.engine();
    const other = world.engine();
    await world.runUntil(() => holder.state() === 'connected' && other.state() === 'connected');
    const granted: HeldLock[] = [];
    const request = { timeoutMs: 5_000, owner: owner('holder') };
    if (as === 'single') void holder.acquire(KEY, 'foreground', request).then((lock) => granted.push(lock));
    else void holder.acquireEach([KEY, NEIGHBOUR], 'background', { ...request, onGranted: (lock) => granted.push(lock) });
    await world.runUntil(() => granted.length === (as === 'single' ? 1 : 2));
    const lock = granted.find((candidate) => candidate.key.id === KEY.id);
    if (lock === undefined) throw new Error('not granted');

    const forcedFrom = lines.length;
    let forced: boolean | null = null;
    void (through === 'holder' ? holder : other).forceRelease(KEY).then((done) => (forced = done));
    await world.runUntil(() => forced !== null && lock.isLost);
    expect(forced).toBe(true);
    void lock.release();
    await world.runTo(world.clock.now() + 200);
    return { sentAfterForce: () => lines.slice(forcedFrom).filter((line) => line.startsWith('e0 sends')) };
  }

  it('through its own process: the release deletes nothing by privateLock\'s name', async () => {
    const { sentAfterForce } = await heldThenForced('holder');
    // The forced release itself is the only transaction on privateLock this process sends.
    expect(sentAfterForce().filter((line) => line.includes(`delete ${PRIVATE_LOCK}`))).toHaveLength(1);
  });

  it('through another process: the holder\'s watch sees privateLock go, and its release deletes nothing by that name', async () => {
    const { sentAfterForce } = await heldThenForced('other');
    expect(sentAfterForce().filter((line) => line.includes(`delete ${PRIVATE_LOCK}`))).toEqual([]);
  });

  // A bulk's key has no holder watch: its release lists the session's nodes before it deletes
  // privateLock — unless the lock is known lost already, as here, when it has nothing to look for.
  const listings = (lines: readonly string[]): string[] => lines.filter((line) => line.startsWith('e0 sends ephemerals') && DOC.startsWith(line.slice('e0 sends ephemerals '.length).replace(/\/$/, '')));

  it('a bulk\'s key, through its own process: the release neither lists nor deletes privateLock', async () => {
    const { sentAfterForce } = await heldThenForced('holder', 'bulk');
    expect(sentAfterForce().filter((line) => line.includes(`delete ${PRIVATE_LOCK}`))).toHaveLength(1);
    expect(listings(sentAfterForce())).toEqual([]);
  });

  it('a bulk\'s key, through another process: the epoch moves, the holder reads privateLock gone, and its release neither lists nor deletes it', async () => {
    const { sentAfterForce } = await heldThenForced('other', 'bulk');
    expect(sentAfterForce().filter((line) => line.includes(`get ${PRIVATE_LOCK}`))).toHaveLength(1);
    expect(sentAfterForce().filter((line) => line.includes(`delete ${PRIVATE_LOCK}`))).toEqual([]);
    expect(listings(sentAfterForce())).toEqual([]);
  });
});
