import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLock, LockKey } from '../../src/lock/lock-engine.js';
import { CohortCore } from '../../src/lock/zookeeper/cohort-core.js';
import { type CohortEvent, type CohortState, transitionOf } from '../../src/lock/zookeeper/cohort-states.js';
import type { ZooKeeperLockEngine } from '../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { zkSettings } from '../integration/lock/zk-test-engines.js';
import { type ScriptedWorld, scriptedWorld } from './sim-scenario.js';
import { drainPromiseJobs } from './virtual-clock.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

const LINGER_MS = 300;
const OWNER = { host: 'h', pid: 1, requestId: 'r' };
const KEY: LockKey = { index: 'docs', id: '1' };
const ROOT = '/moves/locks';

/** The document lock's move, as the transition table is asked for it. */
type Apply = (this: { state: CohortState; guid: string }, event: CohortEvent) => void;
const prototype = CohortCore.prototype as unknown as { apply: Apply };
const tableApply = prototype.apply;
let uninstall: (() => void) | null = null;
afterEach(() => {
  prototype.apply = tableApply;
  uninstall?.();
});

/** Records each move every document lock makes, checking it against the table as it is made. */
function recordMoves(): string[] {
  const moves: string[] = [];
  const names = new Map<string, string>();
  prototype.apply = function (this: { state: CohortState; guid: string }, event: CohortEvent): void {
    const from = this.state;
    tableApply.call(this, event);
    expect(transitionOf(from, event)?.to).toBe(this.state);
    if (!names.has(this.guid)) names.set(this.guid, String.fromCharCode(97 + names.size));
    moves.push(`${names.get(this.guid) ?? ''}: ${from} -${event}-> ${this.state}`);
  };
  return moves;
}

function simulated(): ScriptedWorld {
  // The lock tests' settings, on the simulated server.
  const world = scriptedWorld(zkSettings('simulated:2181', { lockRoot: ROOT, lingerMs: LINGER_MS, documentCleanup: 'release' }));
  uninstall = world.uninstall;
  return world;
}

async function take(engine: ZooKeeperLockEngine, runUntil: (done: () => boolean) => Promise<void>): Promise<HeldLock> {
  let held: HeldLock | null = null;
  void engine.acquire(KEY, 'foreground', { timeoutMs: 1_000, owner: OWNER }).then((lock) => (held = lock));
  await runUntil(() => held !== null);
  if (held === null) throw new Error('not granted');
  return held;
}

/**
 * The production document lock driven through its states on the simulated ZooKeeper (no server):
 * every move it makes is recorded as it asks the transition table for it, and each must be the
 * table's.
 */
describe('a document lock moves only by its transition table', () => {
  it('takes, hands over, lingers, resumes and releases a document through the moves the table has', async () => {
    const moves = recordMoves();
    const { server, engine: newEngine, runUntil } = simulated();
    const engine = newEngine();
    await runUntil(() => engine.state() === 'connected');

    const first = await take(engine, runUntil);
    const second = take(engine, runUntil);
    await drainPromiseJobs();
    await first.release({ handOver: true });
    // The second request holds the lock the first passed on: no move, no round trip.
    const handedOver = await second;
    moves.push('a: (local hand-over)');
    await handedOver.release({ handOver: true });
    await drainPromiseJobs();
    const third = await take(engine, runUntil);
    await third.release({ handOver: true });
    await runUntil(() => moves.at(-1)?.endsWith('released') === true);

    expect(moves).toEqual([
      // A document never seen before: created with its privateLock in one transaction, no read first.
      'a: fastPath -grant-> held',
      'a: (local hand-over)',
      'a: held -linger-> idle',
      'a: idle -resume-> held',
      'a: held -linger-> idle',
      'a: idle -lingerEnded-> held',
      'a: held -finish-> releasing',
      'a: releasing -end-> released',
    ]);
    expect(server.ephemeralsUnder(ROOT)).toEqual([]);
  });

  it('queues behind another process, arbitrates at the head and releases through the moves the table has', async () => {
    const moves = recordMoves();
    const { server, engine: newEngine, runUntil } = simulated();
    const [one, two] = [newEngine(), newEngine()];
    await runUntil(() => one.state() === 'connected' && two.state() === 'connected');

    const held = await take(one, runUntil);
    let waited: HeldLock | null = null;
    void two.acquire(KEY, 'foreground', { timeoutMs: 5_000, owner: OWNER }).then((lock) => (waited = lock));
    await runUntil(() => moves.some((move) => move.startsWith('b:') && move.includes('-evaluate->')));
    // Releases wait for their transaction's answer: the clock runs while they are on their way.
    void held.release({ handOver: false });
    await runUntil(() => waited !== null);
    const second = waited as HeldLock | null;
    if (second === null) throw new Error('not granted');
    void second.release({ handOver: false });
    await runUntil(() => moves.at(-1)?.startsWith('b:') === true && moves.at(-1)?.endsWith('released') === true);

    expect(moves).toEqual([
      'a: fastPath -grant-> held',
      // The batch's create of the document found it there: b queues at once, and waits on privateLock at the head.
      'b: fastPath -enterQueue-> queued',
      'b: queued -evaluate-> queued',
      'a: held -finish-> releasing',
      // privateLock's delete wakes b, which tries privateLock at the head before a's answer is back.
      'b: queued -arbitrate-> arbitrating',
      'a: releasing -end-> released',
      'b: arbitrating -grant-> held',
      'b: held -finish-> releasing',
      'b: releasing -end-> released',
    ]);
    expect(server.ephemeralsUnder(ROOT)).toEqual([]);
  });
});
