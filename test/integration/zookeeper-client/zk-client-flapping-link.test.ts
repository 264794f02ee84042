import fc from 'fast-check';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { newStats } from '../../../src/lock/lock-stats.js';
import { ZkClient } from '../../../src/zookeeper-client/zk-client.js';
import { ZK_RC, toZkError } from '../../../src/zookeeper-client/zk-errors.js';
import { SUSPENDED_LOSS_FRACTION } from '../../../src/lock/zookeeper/session/session.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';

/**
 * The addon's handle over a link that is reset again and again while requests are in flight:
 * the session lives on, so every request either succeeds or fails with a connection loss (the
 * caller then looks at what the server holds), and the link comes back at once.
 */
/** The harness's ZooKeeper allows sessions of up to 20 ticks of 500 ms. */
const SESSION_TIMEOUT_MS = 10_000;

const clients: ZkClient[] = [];
const links: TcpForwarder[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(links.splice(0).map((link) => link.close()));
});

interface Watched {
  readonly client: ZkClient;
  readonly events: string[];
}

async function connectedClient(servers: string): Promise<Watched> {
  const client = new ZkClient({ servers, sessionTimeoutMs: SESSION_TIMEOUT_MS }, newStats());
  clients.push(client);
  const events: string[] = [];
  client.on('connect', () => events.push('connect'));
  client.on('connecting', () => events.push('connecting'));
  client.on('close', (code) => events.push(`close ${code}`));
  client.connect();
  await vi.waitFor(() => expect(events).toContain('connect'), 10_000);
  return { client, events };
}

async function relay(): Promise<TcpForwarder> {
  const link = await TcpForwarder.start(inject('zookeeperConnect'));
  links.push(link);
  return link;
}

describe('ZkClient over a link reset while requests are in flight', () => {
  it('reconnects before the engine would give up on its locks, not a third of the session timeout later', async () => {
    const link = await relay();
    const { client, events } = await connectedClient(link.connectString);
    await client.create2('/flap-reconnect', '', 'ephemeral');
    for (let cut = 0; cut < 3; cut++) {
      const before = events.filter((event) => event === 'connect').length;
      link.dropAll();
      // The bound is the product's own: past this share of the session timeout without a link,
      // the engine declares held locks lost.
      await vi.waitFor(() => expect(events.filter((event) => event === 'connect').length).toBe(before + 1), SESSION_TIMEOUT_MS * SUSPENDED_LOSS_FRACTION);
      expect((await client.get('/flap-reconnect')).stat.ephemeralOwner).toBe(client.sessionId);
    }
  });

  it('keeps replies matched to their requests: no request fails for a reason other than the lost connection', async () => {
    // Two relays to the same server: the client moves to the next address at once after a reset,
    // as it does in any ensemble, so the next connection opens while the last one's requests are pending.
    const [first, second] = [await relay(), await relay()];
    const { client, events } = await connectedClient(`${first.connectString},${second.connectString}`);
    const parent = '/flap-order';
    await client.create(parent, '', 'persistent').catch((error: unknown) => {
      if (toZkError(error).code !== 'NODEEXISTS') throw error;
    });
    const codes = new Map<number, number>();
    let stopped = false;
    const worker = async (w: number): Promise<void> => {
      for (let i = 0; !stopped; i++) {
        try {
          if (i % 3 === 0) await client.multi([{ type: 'create', path: `${parent}/w${w}-`, data: 'x', mode: 'ephemeralSequential' }]);
          else if (i % 3 === 1) await client.get(parent);
          else await client.getChildren2(parent);
          codes.set(0, (codes.get(0) ?? 0) + 1);
        } catch (error) {
          const { rc } = toZkError(error);
          codes.set(rc, (codes.get(rc) ?? 0) + 1);
          // Wait for the session's next state before trying again (as the engine does).
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    };
    const workers = Array.from({ length: 16 }, (_, w) => worker(w));
    for (const pause of fc.sample(fc.integer({ min: 150, max: 650 }), { seed: 7, numRuns: 15 })) {
      await new Promise((resolve) => setTimeout(resolve, pause));
      first.dropAll();
      second.dropAll();
    }
    stopped = true;
    await Promise.all(workers);

    const outcomes = Object.fromEntries([...codes].map(([rc, count]) => [rc, count]));
    expect(codes.get(0) ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect(codes.get(ZK_RC.CONNECTIONLOSS) ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0);
    expect([...codes.keys()].filter((rc) => rc !== 0 && rc !== ZK_RC.CONNECTIONLOSS), JSON.stringify(outcomes)).toEqual([]);
    // The session lived through it all: the handle was never closed as if it had expired.
    expect(events.filter((event) => event.startsWith('close'))).toEqual([]);
  }, 60_000);
});

describe('ZkClient reading a reply larger than one read', () => {
  it('keeps the session: a reply arriving in many pieces is progress, not silence', async () => {
    const link = await relay();
    const { client, events } = await connectedClient(link.connectString);
    // Close to the server's 1 MB limit: read back through the relay, it arrives in many pieces.
    const data = Buffer.alloc(1_000_000, 'x');
    await client.create2('/flap-large-reply', data, 'ephemeral');
    for (let round = 0; round < 10; round++) {
      const reads = await Promise.all([client.get('/flap-large-reply'), client.get('/flap-large-reply'), client.get('/flap-large-reply')]);
      for (const read of reads) expect(read.data.equals(data)).toBe(true);
    }
    expect(events.filter((event) => event.startsWith('close'))).toEqual([]);
  });
});
