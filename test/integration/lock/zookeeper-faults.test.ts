import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LockUnavailableError } from '../../../src/lock/lock-errors.js';
import { lockEvents } from '../../../src/lock/lock-events.js';
import { parseNodeData } from '../../../src/lock/lock-node-data.js';
import { childrenOrEmpty } from '../../../src/zookeeper-client/zk-client.js';
import { ZK_RC } from '../../../src/zookeeper-client/zk-errors.js';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';
import { documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { Connection } from '../../../src/lock/zookeeper/session/connection.js';
import { freePort } from '../../support/free-port.js';
import { captureLogs } from '../faults/fault-kit.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { ZK_OPCODE } from '../../support/zookeeper-frames.js';
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
  vi.restoreAllMocks();
  await pool.closeAll();
  await Promise.all(forwarders.splice(0).map((f) => f.close()));
});

async function forwarder(): Promise<TcpForwarder> {
  const f = await TcpForwarder.start(zk.connectString);
  forwarders.push(f);
  return f;
}

/** How many callers wait for the ZooKeeper link right now (an acquisition loop parked until it is back). */
function countLinkWaits(): { pending: number } {
  const counter = { pending: 0 };
  const original = Connection.prototype.whenConnected;
  vi.spyOn(Connection.prototype, 'whenConnected').mockImplementation(async function (this: Connection, ...args) {
    const ready = original.apply(this, args);
    if (this.current() !== null) return ready;
    counter.pending++;
    try {
      return await ready;
    } finally {
      counter.pending--;
    }
  });
  return counter;
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

  it('lets a foreground request that arrives while the connection is down overtake a queued background one', async () => {
    const settings = zkSettings(zk.connectString, { sessionTimeoutMs: 4_000 });
    const proxy = await forwarder();
    const direct = pool.open(settings);
    const other = pool.open(settings);
    const flaky = pool.open({ ...settings, servers: proxy.connectString });
    const key = { index: 'faults', id: 'poke-while-down' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    const entries = async (prefix: string): Promise<string[]> => (await childrenOrEmpty(raw.client, docPath)).filter((c) => c.startsWith(prefix));
    const holder = await direct.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('holder') });
    const granted: string[] = [];
    const queuedFirst = other.acquire(key, 'background', { timeoutMs: 10_000, owner: owner('queued-first') }).then((held) => (granted.push('queued-first'), held));
    await waitFor(async () => (await entries('B-')).length === 1, 5_000);
    // The flaky engine queues behind it; its wait's watch (getData) loses its reply, and the
    // engine cannot reconnect until unfrozen: its acquisition loop waits for the link.
    const dropped = proxy.dropReplyTo([ZK_OPCODE.getData], { freezeAfter: true });
    const linkWaits = countLinkWaits();
    const background = flaky.acquire(key, 'background', { timeoutMs: 10_000, owner: owner('flaky-bg') }).then((held) => (granted.push('flaky-bg'), held));
    await dropped;
    await waitFor(() => linkWaits.pending > 0, 5_000);
    const foreground = flaky.acquire(key, 'foreground', { timeoutMs: 10_000, owner: owner('flaky-fg') }).then((held) => (granted.push('flaky-fg'), held));
    proxy.unfreeze();
    // The foreground arrival is not forgotten on the way back: the entry moves to foreground rank.
    await waitFor(async () => (await entries('A-')).length === 1, 5_000);
    await holder.release();
    const first = await foreground;
    expect(granted).toEqual(['flaky-fg']);
    await first.release();
    await Promise.all([queuedFirst, background].map(async (acquiring) => (await acquiring).release()));
    expect(granted).toHaveLength(3);
  });

  it('reads again less and less often while its reads cannot tell what it holds, and holds the lock once they can', async () => {
    const settings = zkSettings(zk.connectString, { sessionTimeoutMs: 4_000 });
    const proxy = await forwarder();
    const logs = captureLogs('warn');
    const engine = pool.open({ ...settings, servers: proxy.connectString }, { logger: logs.logger });
    const key = { index: 'faults', id: 'unreadable' };
    const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
    // The server runs the transaction that creates our privateLock; we are told the session moved.
    const moved = proxy.answerWithError([ZK_OPCODE.multi], ZK_RC.SESSIONMOVED);
    const acquiring = engine.acquire(key, 'foreground', { timeoutMs: 15_000, owner: owner('unreadable') });
    await moved;
    // The next four reads of the document's children come back as answers the client could not read.
    const unreadable = proxy.answerWithError([ZK_OPCODE.getChildren2], ZK_RC.MARSHALLINGERROR, { times: 4 });
    await waitFor(() => proxy.errorAnswers === 2, 5_000);
    const secondAt = Date.now();
    await unreadable;
    // Paced 0.1 s, 0.2 s, 0.4 s, 0.8 s: the third and fourth read come 1.2 s after the second, not 0.2 s.
    expect(Date.now() - secondAt).toBeGreaterThanOrEqual(1_000);
    await waitFor(() => logs.lines().some((line) => line.msg === 'cannot read what ZooKeeper holds for this lock; trying again, less often'), 5_000);
    const held = await acquiring;
    // The privateLock the moved transaction created is recognised as ours: no second one, no queue entry.
    expect(await raw.client.getChildren(docPath)).toEqual(['privateLock']);
    expect(parseNodeData((await raw.client.get(`${docPath}/privateLock`)).data).owner?.requestId).toBe('unreadable');
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
    const logs = captureLogs('error');
    const engine = pool.open(zkSettings(`127.0.0.1:${port}`, { connectionRetry: 2, connectionDelayMs: 100 }), { logger: logs.logger });
    await waitFor(() => engine.state() === 'unavailable', 3_000);
    const started = Date.now();
    const timeoutMs = 5_000;
    await expect(engine.acquire({ index: 'x', id: 'y' }, 'foreground', { timeoutMs, owner: owner('o') })).rejects.toBeInstanceOf(
      LockUnavailableError,
    );
    // Refused on the unavailable service, not after sitting out its wait (no wall-clock speed bound here).
    expect(Date.now() - started).toBeLessThan(timeoutMs);
    expect(JSON.stringify(logs.lines())).toContain(`127.0.0.1:${port}`);
  });
});
