import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LockUnavailableError } from '../../../src/lock/lock-errors.js';
import { lockEvents } from '../../../src/lock/lock-events.js';
import { parseNodeData } from '../../../src/lock/lock-node-data.js';
import { childrenOrEmpty } from '../../../src/lock/zk-client.js';
import { type RawZkConnection, connectRawClient } from '../../../src/lock/zk-raw-client.js';
import { documentPath, normalizeRoot } from '../../../src/lock/znode-names.js';
import { freePort } from '../../support/free-port.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { type ZooKeeperCluster, startZooKeeper } from '../../support/zookeeper-server.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';
import { EnginePool, zkSettings } from './zk-test-engines.js';

/** Own ZooKeeper with a small tick so sessions can expire within a second. */
let zk: ZooKeeperCluster;
let raw: RawZkConnection;
const pool = new EnginePool();
const forwarders: TcpForwarder[] = [];

beforeAll(async () => {
  zk = await startZooKeeper(1, { tickTimeMs: 100 });
  raw = await connectRawClient(zk.connectString, 4_000);
});

afterAll(async () => {
  await raw?.close();
  await zk?.stop();
});

afterEach(async () => {
  await pool.closeAll();
  await Promise.all(forwarders.splice(0).map((f) => f.close()));
});

async function forwarder(): Promise<TcpForwarder> {
  const f = await TcpForwarder.start(zk.connectString);
  forwarders.push(f);
  return f;
}

describe('ZooKeeper engine under connection faults', () => {
  it('finds its queue entry again when the create reply is lost (no orphan, no duplicate)', async () => {
    const settings = zkSettings(zk.connectString, { sessionTimeoutMs: 2_000 });
    const proxy = await forwarder();
    const direct = pool.open(settings);
    const flaky = pool.open({ ...settings, servers: proxy.connectString });
    const key = { index: 'faults', id: 'lost-entry-reply' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    const holder = await direct.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('holder') });
    // A first, timed-out try marks the key contended, so the next one queues at once.
    await expect(flaky.acquire(key, 'foreground', { timeoutMs: 100, owner: owner('probe') })).rejects.toThrow();
    proxy.dropOnNextReply();
    const waiting = flaky.acquire(key, 'foreground', { timeoutMs: 8_000, owner: owner('flaky') });
    await waitFor(() => proxy.connections >= 2, 8_000);
    await waitFor(async () => (await raw.client.getChildren(docPath)).filter((c) => c.startsWith('A-')).length === 1, 8_000);
    await holder.release();
    const held = await waiting;
    // Granted: the holder keeps its one entry until its release transaction; an orphan from the
    // lost reply would be a second entry. So: exactly one entry, the flaky client's, and its privateLock.
    const children = await raw.client.getChildren(docPath);
    const entries = children.filter((c) => c.startsWith('A-'));
    expect(entries).toHaveLength(1);
    expect(parseNodeData((await raw.client.get(`${docPath}/${entries[0]!}`)).data).owner?.requestId).toBe('flaky');
    expect(children).toContain('privateLock');
    expect((await flaky.inspect(key)).holder?.owner.requestId).toBe('flaky');
    await held.release();
    expect(await childrenOrEmpty(raw.client, docPath)).toEqual([]);
  });

  it('recovers a privateLock whose create reply was lost and leaves nothing behind', async () => {
    const settings = zkSettings(zk.connectString, { sessionTimeoutMs: 2_000 });
    const proxy = await forwarder();
    const flaky = pool.open({ ...settings, servers: proxy.connectString });
    const key = { index: 'faults', id: 'lost-lock-reply' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    await (await flaky.acquire({ index: 'faults', id: 'warm-up' }, 'foreground', { timeoutMs: 2_000, owner: owner('w') })).release();
    proxy.dropOnNextReply();
    const held = await flaky.acquire(key, 'foreground', { timeoutMs: 8_000, owner: owner('flaky') });
    expect(proxy.connections).toBeGreaterThanOrEqual(2);
    expect(await raw.client.getChildren(docPath)).toEqual(['privateLock']);
    await held.release();
    expect(await childrenOrEmpty(raw.client, docPath)).toEqual([]);
  });

  it('marks held locks lost on a silent partition, and works again with a new session after expiry', async () => {
    const settings = zkSettings(zk.connectString, { sessionTimeoutMs: 1_000 });
    const proxy = await forwarder();
    let expiries = 0;
    const engine = pool.open({ ...settings, servers: proxy.connectString }, { events: lockEvents({ sessionExpired: () => expiries++ }) });
    const other = pool.open(settings);
    const key = { index: 'faults', id: 'expiry' };
    const held = await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('victim') });
    const states: string[] = [];
    engine.onStateChange((state) => states.push(state));
    proxy.freeze();
    await waitFor(() => held.lost.aborted, 5_000);
    expect((held.lost.reason as { code?: string }).code).toBe('LOCK_LOST');
    expect(states).toContain('suspended');
    // The server expires the session: the ephemeral privateLock disappears for everybody.
    const taken = await other.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('successor') });
    proxy.unfreeze();
    await waitFor(() => engine.state() === 'connected', 8_000);
    await held.release();
    expect((await other.inspect(key)).holder?.owner.requestId).toBe('successor');
    await taken.release();
    const again = await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('again') });
    expect(again.lost.aborted).toBe(false);
    await again.release();
    expect(engine.stats().sessions).toBe(2);
    expect(expiries).toBe(1);
  });

  it('closes in bounded time while holding a lock with ZooKeeper out of reach', async () => {
    const settings = zkSettings(zk.connectString, { sessionTimeoutMs: 2_000 });
    const proxy = await forwarder();
    const engine = pool.open({ ...settings, servers: proxy.connectString });
    const held = await engine.acquire({ index: 'faults', id: 'close-while-down' }, 'foreground', { timeoutMs: 2_000, owner: owner('c') });
    proxy.freeze();
    await waitFor(() => engine.state() !== 'connected', 5_000);
    const started = Date.now();
    await engine.close();
    expect(engine.state()).toBe('closed');
    expect(Date.now() - started).toBeLessThan(5_000);
    await held.release();
    proxy.unfreeze();
  });

  it('fails fast with LOCK_UNAVAILABLE and logs the servers when ZooKeeper is unreachable', async () => {
    const port = await freePort();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const engine = pool.open(zkSettings(`127.0.0.1:${port}`, { connectionRetry: 2, connectionDelayMs: 100 }), { logger: pino({ level: 'error' }, sink) });
    await waitFor(() => engine.state() === 'unavailable', 3_000);
    const started = Date.now();
    const timeoutMs = 5_000;
    await expect(engine.acquire({ index: 'x', id: 'y' }, 'foreground', { timeoutMs, owner: owner('o') })).rejects.toBeInstanceOf(
      LockUnavailableError,
    );
    // Refused on the unavailable service, not after sitting out its wait (no wall-clock speed bound here).
    expect(Date.now() - started).toBeLessThan(timeoutMs);
    expect(lines.join('')).toContain(`127.0.0.1:${port}`);
  });
});
