import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLock, LockKey } from '../../src/lock/lock-engine.js';
import { documentPath, normalizeRoot } from '../../src/lock/zookeeper/znode-names.js';
import { owner } from '../unit/lock/lock-engine-suite.js';
import { zkSettings } from '../integration/lock/zk-test-engines.js';
import { nodesUnder, scriptedWorld } from './sim-scenario.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

const ROOT = '/recreated/locks';
const KEY: LockKey = { index: 'docs', id: 'd0' };
const DOC = documentPath(normalizeRoot(ROOT), KEY);
const SLOW_MS = 100;

let uninstall: (() => void) | null = null;
afterEach(() => uninstall?.());

/**
 * A queue entry's name on a document node created anew, scripted on the simulated ZooKeeper. A
 * waiter's entry is deleted by hand, and the event that tells it the entry ahead went is slow.
 * Meanwhile the emptied document node is reaped and created again, and two processes queue on
 * it: the node's sequence counter started over, so the second entry gets the waiter's old name.
 * The waiter, reading the queue, must not take that entry for its own — it would be served ahead
 * of the process that queued there. The document node's czxid, which every queue read returns,
 * tells it: younger than the entry, the node is not the one the entry was made in, and the waiter
 * queues again. Found by the million-seed run (seed 724439).
 */
describe('a waiter whose entry went with its document node', () => {
  it('queues again behind an entry that took its old name on the node created anew', async () => {
    const slow = new Set<string>();
    const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: 0, documentCleanup: 'reaper' }), {
      latency: (client) => (client !== undefined && slow.has(client) ? SLOW_MS : 1),
    });
    uninstall = world.uninstall;
    const { server, runUntil, runTo, clock } = world;
    // Sessions e0, e1, e2, e3 in this order.
    const [holder, waiter, ahead, later] = [world.engine(), world.engine(), world.engine(), world.engine()];
    await runUntil(() => [holder, waiter, ahead, later].every((engine) => engine.state() === 'connected'));
    const acquire = (engine: typeof holder, name: string): { held: HeldLock | null } => {
      const slot: { held: HeldLock | null } = { held: null };
      void engine.acquire(KEY, 'background', { timeoutMs: 8_000, owner: owner(name) }).then((lock) => (slot.held = lock));
      return slot;
    };
    const entries = (): { readonly name: string; readonly owner: string }[] => nodesUnder(world, DOC).filter((node) => node.name !== 'privateLock');
    const handOn = async (from: HeldLock, to: { held: HeldLock | null }): Promise<HeldLock> => {
      void from.release();
      await runUntil(() => to.held !== null);
      return to.held!;
    };

    const held = acquire(holder, 'holder');
    await runUntil(() => held.held !== null);
    const aheadTurn = acquire(ahead, 'ahead');
    await runUntil(() => entries().length === 1);
    const waiting = acquire(waiter, 'waiter');
    await runUntil(() => entries().length === 2);
    // The waiter has its answer, and watches the entry ahead.
    await runTo(clock.now() + 10);
    const oldName = entries().find((entry) => entry.owner === world.clients[1]!.sessionId)!.name;
    server.delete(`${DOC}/${oldName}`, -1);

    // The waiter hears that the entry ahead went only after the document node is made anew.
    slow.add('e1');
    void (await handOn(held.held!, aheadTurn)).release();
    await runUntil(() => server.ephemeralsUnder(DOC).length === 0);
    server.delete(DOC, -1);
    const heldAgain = acquire(holder, 'holder again');
    await runUntil(() => heldAgain.held !== null);
    const aheadAgain = acquire(ahead, 'ahead again');
    await runUntil(() => entries().length === 1);
    const laterTurn = acquire(later, 'later');
    await runUntil(() => entries().length === 2);
    expect(entries().find((entry) => entry.owner === world.clients[3]!.sessionId)?.name).toBe(oldName);
    slow.delete('e1');
    await runTo(clock.now() + 2 * SLOW_MS);

    // The later process is slow now: a waiter that takes its entry for its own wins the race for privateLock.
    slow.add('e3');
    const aheadHeld = await handOn(heldAgain.held!, aheadAgain);
    void aheadHeld.release();
    await runUntil(() => laterTurn.held !== null || waiting.held !== null);
    expect({ later: laterTurn.held !== null, waiter: waiting.held !== null }).toEqual({ later: true, waiter: false });
    void laterTurn.held!.release();
    await runUntil(() => waiting.held !== null);
  });
});
