import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import type { LockServiceState } from '../../../src/lock/lock-engine.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { owner } from '../../unit/lock/lock-engine-suite.js';
import { EnginePool, zkSettings } from './zk-test-engines.js';

/**
 * The connect window (zookeeper.connection.retry × zookeeper.connection.delay) shorter than the
 * safety margin (a quarter of the session timeout): the service is declared unavailable first,
 * and the margin must still mark the held locks lost — the server may expire the session, and
 * give the document to another process, before this one hears of it.
 */
const SESSION_TIMEOUT_MS = 4_000;

const pool = new EnginePool();
const links: TcpForwarder[] = [];

afterEach(async () => {
  await pool.closeAll();
  await Promise.all(links.splice(0).map((link) => link.close()));
});

describe('safety margin after the connect window', () => {
  it('marks held locks lost at the margin although the service was declared unavailable before it', async () => {
    const link = await TcpForwarder.start(inject('zookeeperConnect'));
    links.push(link);
    // Window 200 ms, margin 1 s.
    const settings = zkSettings(link.connectString, { sessionTimeoutMs: SESSION_TIMEOUT_MS, connectionRetry: 1, connectionDelayMs: 200 });
    const engine = pool.open(settings);
    const states: LockServiceState[] = [];
    engine.onStateChange((state) => states.push(state));
    const held = await engine.acquire({ index: 'margin', id: 'window' }, 'foreground', { timeoutMs: 2_000, owner: owner('holder') });

    // The link breaks and cannot come back: the client's new connection is held unanswered.
    link.freeze();
    link.dropAll();
    await vi.waitFor(() => expect(states).toContain('unavailable'), 2_000);
    expect(held.lost.aborted).toBe(false);
    // Within the session (4 s), past the margin (1 s after the drop).
    await vi.waitFor(() => expect(held.lost.aborted).toBe(true), SESSION_TIMEOUT_MS / 2);
    expect((held.lost.reason as { code?: string }).code).toBe('LOCK_LOST');

    link.unfreeze();
    await vi.waitFor(() => expect(engine.state()).toBe('connected'), SESSION_TIMEOUT_MS);
    await held.release();
    // The document is free again for this process.
    await (await engine.acquire({ index: 'margin', id: 'window' }, 'foreground', { timeoutMs: 2_000, owner: owner('next') })).release();
  });
});
