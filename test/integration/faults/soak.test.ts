import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { FAULT_TEST_TICK_MS } from '../../support/zookeeper-ensemble.js';
import { fourLetterWord, restartNode, startZooKeeper, type ZooKeeperCluster } from '../../support/zookeeper-server.js';
import { readyz, runLoad, Tally, thousands, waitUntil } from './fault-kit.js';

/**
 * Bounded by count, not by time (a throughput floor would be a speed goal inside a test):
 * `SOAK_WRITES=20000 npx vitest run test/integration/faults/soak.test.ts` for the long form. The
 * time cap only stops a stalled run; reaching it fails the test.
 */
const SOAK_WRITES = Number(process.env.SOAK_WRITES ?? 1_500);
const SOAK_CAP_MS = Math.max(60_000, SOAK_WRITES * 20);
const DOCS = Array.from({ length: 12 }, (_, i) => `s${i}`);
/** Sockets, timers and the ZooKeeper handle come and go with traffic; growth beyond this is a leak. */
const HANDLE_TOLERANCE = 8;

/**
 * Open handles other than TCP sockets (timers, servers, watchers, ...). Idle keep-alive sockets
 * are not a leak: the proxy keeps client connections open like Elasticsearch does, and fetch pools
 * them for as long as the server's keep-alive hint allows.
 */
function openHandles(): number {
  return process.getActiveResourcesInfo().filter((type) => type !== 'TCPSocketWrap').length;
}
/** The lock root is a persistent node created by the first write; everything under it must go. */
const LOCK_ROOT = 1;

describe('soak', () => {
  let zk: ZooKeeperCluster;
  let stack: WriteStack;

  beforeAll(async () => {
    zk = await startZooKeeper(1, { tickTimeMs: FAULT_TEST_TICK_MS, systemProperties: { 'zookeeper.forceSync': 'no' } });
    stack = await startWriteStack({
      zookeeper: zk.connectString,
      proxies: 2,
      standIn: { writeLatencyMs: 1 },
      settings: {
        zookeeper: { sessionTimeoutMs: 4_000, connectionRetry: 3, connectionDelayMs: 500 }, lock: { foregroundTimeoutMs: 3_000, backgroundTimeoutMs: 1_000 },
        elasticsearch: { requestRetryCount: 1 },
      },
    });
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await zk?.stop();
  });

  it(`${SOAK_WRITES} mixed writes through two proxies with a ZooKeeper restart in the middle`, async () => {
    const node = zk.nodes[0];
    if (node === undefined) throw new Error('no ZooKeeper node');
    const handlesBefore = openHandles();
    const znodesBefore = await znodeCount(node.clientPort);
    const tally = new Tally();
    const startedAt = performance.now();
    const capAt = startedAt + SOAK_CAP_MS;
    let restarted = false;
    const done = (): boolean => (restarted && tally.total >= SOAK_WRITES) || performance.now() > capAt;
    const load = runLoad({ urls: stack.urls, index: 'soak', docs: DOCS, writers: 16, done, tally });

    await waitUntil(() => tally.total >= SOAK_WRITES / 2, SOAK_CAP_MS, 'half of the writes');
    await node.stop('SIGKILL');
    await restartNode(node);
    restarted = true;
    await load;
    const soakSeconds = Math.round((performance.now() - startedAt) / 1_000);
    await waitUntil(async () => (await Promise.all(stack.adminUrls.map(readyz))).every((status) => status === 200), 20_000, 'ready after the soak');

    // Counted with `stat`, not a new client: right after a restart ZooKeeper 3.8 sometimes leaves a
    // new session's connect request unanswered (see the report); the proxies' sessions are fine.
    const proxy = stack.proxies[0];
    if (proxy === undefined) throw new Error('no proxy');
    const held = async (): Promise<number> =>
      (await Promise.all(DOCS.map((id) => proxy.locks.inspect({ index: 'soak', id })))).filter((i) => i.holder !== null || i.queue.length > 0).length;
    const tree = await waitUntil(async () => (await held()) === 0, 10_000, 'no holder or waiter left');
    let znodesLeft = -1;
    const reaped = await waitUntil(async () => (znodesLeft = await znodeCount(node.clientPort)) <= znodesBefore + LOCK_ROOT, 15_000, 'znodes back to the count before the run').catch((error: unknown) => {
      throw new Error(`${String(error)}: ${znodesLeft} znodes, ${znodesBefore} before the run`);
    });
    await waitUntil(() => openHandles() <= handlesBefore + HANDLE_TOLERANCE, 5_000, 'open handles back to the start').catch(() => 0);
    const handlesAfter = openHandles();

    console.log(
      `soak: ${thousands(tally.total)} writes in ${soakSeconds} s via 2 proxies, 1 ZooKeeper restart, ${stack.standIn.overlaps.count} overlaps, ` +
        `${tally.unanswered} unanswered (${tally.statuses()}), handles ${handlesBefore} -> ${handlesAfter}, ` +
        `no lock holder/waiter ${Math.round(tree)} ms after, znode count back to ${znodesBefore} + the lock root after ${Math.round(reaped)} ms`,
    );
    expect(stack.standIn.overlaps.examples).toEqual([]);
    expect(tally.unansweredExamples).toEqual([]);
    expect(tally.unanswered).toBe(0);
    expect(tally.unexpected).toEqual([]);
    expect(tally.total).toBeGreaterThanOrEqual(SOAK_WRITES);
    expect(handlesAfter).toBeLessThanOrEqual(handlesBefore + HANDLE_TOLERANCE);
  });
});

async function znodeCount(port: number): Promise<number> {
  const match = /Node count: (\d+)/.exec(await fourLetterWord(port, 'stat'));
  if (match?.[1] === undefined) throw new Error('ZooKeeper did not report its node count');
  return Number(match[1]);
}
