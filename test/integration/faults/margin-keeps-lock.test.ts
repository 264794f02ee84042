import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockServiceState } from '../../../src/lock/lock-engine.js';
import { lockEvents } from '../../../src/lock/lock-events.js';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';
import { PRIVATE_LOCK, documentPath, normalizeRoot } from '../../../src/lock/zookeeper/znode-names.js';
import { EnginePool, zkSettings } from '../lock/zk-test-engines.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { startZooKeeper, type ZooKeeperCluster } from '../../support/zookeeper-server.js';
import { owner, waitFor } from '../../unit/lock/lock-engine-suite.js';

/**
 * The safety margin keeps the lock. Engine A holds a lock for a long write; its ZooKeeper link goes silent past
 * the safety margin (A marks the lock lost: nothing new may be forwarded under it) and comes back
 * before the session expires. A's write may still be inside Elasticsearch, so nobody else may get
 * the lock until A has released it.
 *
 * Timing: the C client gives up on a silent link after 2/3 of the session timeout, the engine
 * declares the loss 1/4 later (~0.92 x the timeout), and the server expires the session at the
 * timeout: a 10 s session leaves ~0.8 s to bring the link back in between.
 */
const SESSION_TIMEOUT_MS = 10_000;

describe('safety margin with the link back before the session expires', () => {
  let zk: ZooKeeperCluster;
  let raw: RawZkConnection;
  const pool = new EnginePool();

  beforeAll(async () => {
    // tickTime 500 ms: sessions of up to 20 ticks = 10 s.
    zk = await startZooKeeper(1, { tickTimeMs: 500 });
    raw = await connectRawClient(zk.connectString, SESSION_TIMEOUT_MS);
  }, 60_000);

  afterAll(async () => {
    await pool.closeAll();
    await raw?.close();
    await zk?.stop();
  });

  it('keeps privateLock after marking the lock lost: nobody else is granted before the holder releases', async () => {
    const link = await TcpForwarder.start(zk.connectString);
    try {
      const settings = zkSettings(zk.connectString, { sessionTimeoutMs: SESSION_TIMEOUT_MS, connectionRetry: 20, connectionDelayMs: 1_000 });
      let expiries = 0;
      const a = pool.open({ ...settings, servers: link.connectString }, { events: lockEvents({ sessionExpired: () => expiries++ }) });
      const b = pool.open(settings);
      const key = { index: 'margin', id: 'long-write' };
      const docPath = documentPath(normalizeRoot(settings.lockRoot), key);
      const states: LockServiceState[] = [];
      a.onStateChange((state) => states.push(state));

      const held = await a.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('a-long-write') });
      const ourNode = await raw.client.get(`${docPath}/${PRIVATE_LOCK}`);
      let releasedByA = false;
      let grantedBeforeRelease: boolean | null = null;
      const waiting = b.acquire(key, 'foreground', { timeoutMs: 60_000, owner: owner('b') }).then((lock) => {
        grantedBeforeRelease = !releasedByA;
        return lock;
      });
      await waitFor(async () => (await b.inspect(key)).queue.length === 1);

      link.freeze();
      await new Promise<void>((resolve) => held.lost.addEventListener('abort', () => resolve(), { once: true }));
      link.unfreeze();
      await waitFor(() => a.state() === 'connected', SESSION_TIMEOUT_MS);

      // Preconditions of the scenario: the margin passed, and A's session survived it.
      expect(states).toContain('unavailable');
      expect(expiries, 'the session expired: the link came back too late for this scenario').toBe(0);
      // A round trip on A's session: anything A queued while disconnected has been applied now.
      await a.inspect(key);
      await waitFor(async () => (await b.inspect(key)).holder !== null);
      const holder = (await b.inspect(key)).holder;
      expect(holder?.owner.requestId, 'holder after the reconnect, before A released').toBe('a-long-write');
      const node = await raw.client.get(`${docPath}/${PRIVATE_LOCK}`);
      expect(node.stat.ephemeralOwner === ourNode.stat.ephemeralOwner && node.stat.ctime === ourNode.stat.ctime).toBe(true);
      expect(grantedBeforeRelease).toBeNull();

      releasedByA = true;
      await held.release();
      const next = await waiting;
      expect(grantedBeforeRelease).toBe(false);
      await next.release();
    } finally {
      await link.close();
    }
  }, 60_000);
});
