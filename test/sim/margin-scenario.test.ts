import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ZooKeeperSettings } from '../../src/config/settings.js';
import type { HeldLock } from '../../src/lock/lock-engine.js';
import { lockEvents } from '../../src/lock/lock-events.js';
import { ZooKeeperLockEngine } from '../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { SimClient, type SimNet } from './sim-client.js';
import { SimRandom } from './sim-random.js';
import { SimZooKeeper } from './sim-zookeeper.js';
import { VirtualClock, drainPromiseJobs } from './virtual-clock.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

const SESSION_TIMEOUT_MS = 4_000;
const MARGIN_MS = SESSION_TIMEOUT_MS / 4;

let uninstall: (() => void) | null = null;
afterEach(() => uninstall?.());

/**
 * The safety margin on its own, scripted on the simulated ZooKeeper: a held lock is declared
 * lost a quarter of the session timeout after the client notices a silent link, whichever of
 * "suspended" or "unavailable" the session shows by then. With a connect window (connection.retry
 * x delay = 600 ms) shorter than the margin (1 s), the session turns "unavailable" first.
 */
describe('safety margin with a short connect window', () => {
  it('marks a held lock lost at the margin, long before the session expires', async () => {
    const clock = new VirtualClock(1_800_000_000_000);
    uninstall = clock.install();
    const server = new SimZooKeeper(() => clock.now());
    const net: SimNet = { server, clock, random: new SimRandom(1), latency: () => 1, trace: () => undefined };
    const clients: SimClient[] = [];
    const settings: ZooKeeperSettings = {
      servers: 'simulated:2181',
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      connectionRetry: 3,
      connectionDelayMs: 200,
      foregroundPrefix: 'A',
      backgroundPrefix: 'B',
      lockRoot: '/margin/locks',
      auth: null,
      handOverMaxCount: 16,
      handOverMaxMs: 100,
      lingerMs: 0,
      documentCleanup: 'release',
    };
    const lostAt: { at: number; reason: string }[] = [];
    const engine = new ZooKeeperLockEngine(settings, pino({ level: 'silent' }), {
      events: lockEvents({ lost: (lost) => lostAt.push({ at: clock.now(), reason: lost.reason }) }),
      handles: {
        open: () => {
          const client = new SimClient(net, SESSION_TIMEOUT_MS, 'e0');
          clients.push(client);
          return { handle: client, zk: client };
        },
      },
    });
    const runUntil = async (done: () => boolean): Promise<void> => {
      await drainPromiseJobs();
      while (!done() && clock.fireNext()) await drainPromiseJobs();
    };
    const runTo = async (time: number): Promise<void> => {
      await drainPromiseJobs();
      while (clock.fireNext(time)) await drainPromiseJobs();
      clock.advanceTo(time);
    };
    let held: HeldLock | null = null;
    await runUntil(() => engine.state() === 'connected');
    void engine.acquire({ index: 'docs', id: '1' }, 'foreground', { timeoutMs: 1_000, owner: { host: 'h', pid: 1, requestId: 'r' } }).then((lock) => (held = lock));
    await runUntil(() => held !== null);
    const lock = held as HeldLock | null;
    if (lock === null) throw new Error('not granted');

    const cutAt = clock.now();
    // Noticed after 10 ms, back only after the server expired the session.
    clients[0]!.silence(10, 2 * SESSION_TIMEOUT_MS, SESSION_TIMEOUT_MS, 0);
    await runTo(cutAt + 10 + MARGIN_MS - 1);
    expect(engine.state()).toBe('unavailable');
    expect(lostAt.map((lost) => ({ afterCut: lost.at - cutAt, reason: lost.reason }))).toEqual([]);
    expect(lock.isLost).toBe(false);
    await runUntil(() => lock.isLost || clock.now() >= cutAt + SESSION_TIMEOUT_MS);
    expect(lock.isLost).toBe(true);
    expect(clock.now() - cutAt).toBe(10 + MARGIN_MS);
  });
});
