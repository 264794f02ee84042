import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HeldLock } from '../../src/lock/lock-engine.js';
import { lockEvents } from '../../src/lock/lock-events.js';
import { zkSettings } from '../integration/lock/zk-test-engines.js';
import { scriptedWorld } from './sim-scenario.js';

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
    // The lock tests' settings, on the simulated server.
    const world = scriptedWorld(zkSettings('simulated:2181', { sessionTimeoutMs: SESSION_TIMEOUT_MS, lockRoot: '/margin/locks' }));
    uninstall = world.uninstall;
    const { clock, clients, runUntil, runTo } = world;
    const lostAt: { at: number; reason: string }[] = [];
    const engine = world.engine({ events: lockEvents({ lost: (lost) => lostAt.push({ at: clock.now(), reason: lost.reason }) }) });
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
