import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyRuntime } from '../../../src/server/proxy-runtime.js';
import type { EsStandIn } from '../../support/es-stand-in.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { startZooKeeper, type ZooKeeperCluster } from '../../support/zookeeper-server.js';
import { exchange, waitUntil } from './fault-kit.js';

/** The link is declared suspended at ~2/3 of it and lost at the margin (~0.92): a window of seconds. */
const SESSION_TIMEOUT_MS = 12_000;

/**
 * A client's bulk is at the cluster as one sub-bulk at a time (bulk-round.ts). Its items without a
 * lockable id (auto-generated ids) ride with the first sub-bulk that goes. They once went on their
 * own as soon as the lock acquisition was over — beside a sub-bulk still waiting for its suspended
 * ZooKeeper link to come back: two requests of one bulk at the cluster, the auto-id item ahead of
 * the locked items written before it in the body.
 */
describe('a bulk whose sub-bulk waits for a suspended ZooKeeper link', () => {
  let zk: ZooKeeperCluster;
  let link: TcpForwarder;
  let stack: WriteStack;
  let standIn: EsStandIn;
  let proxy: ProxyRuntime;

  beforeAll(async () => {
    zk = await startZooKeeper(1, { tickTimeMs: 2_000 });
    link = await TcpForwarder.start(zk.connectString);
    stack = await startWriteStack({
      zookeeper: link.connectString,
      settings: {
        zookeeper: { sessionTimeoutMs: SESSION_TIMEOUT_MS }, lock: { foregroundTimeoutMs: 60_000, backgroundTimeoutMs: 60_000 },
        proxy: { upstreamTimeoutMs: 120_000 },
      },
    });
    standIn = stack.standIn;
    proxy = stack.proxies[0]!;
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await link?.close();
    await zk?.stop();
  });

  it('sends its auto-id items with that sub-bulk once the link is back, not beside it', async () => {
    const url = stack.urls[0]!;
    // A single write holds the document's lock in this process, parked at the cluster.
    const gate = standIn.gateDocument('subbulk', 'held');
    const holder = exchange(`${url}/subbulk/_doc/held`, { method: 'PUT', body: '{"from":"holder"}' }, 120_000);
    await gate.arrived(1);
    // The bulk waits for that lock locally; its second item has no id and needs no lock.
    const body = ['{"index":{"_index":"subbulk","_id":"held"}}', '{"from":"bulk"}', '{"index":{"_index":"subbulk"}}', '{"from":"auto-id"}', ''].join('\n');
    const bulk = exchange(`${url}/_bulk`, { method: 'POST', body, headers: { 'content-type': 'application/x-ndjson', 'X-Lock-Type': 'background' } }, 120_000);
    await waitUntil(() => proxy.locks.activity().waiting === 1, 10_000, 'the bulk waits behind the holder');

    link.freeze();
    await waitUntil(() => proxy.locks.state() === 'suspended', SESSION_TIMEOUT_MS, 'the link suspended');
    // The holder is answered: its lock is handed to the bulk inside the process, and the bulk's
    // sub-bulk waits for the link (nothing is sent under a lock nobody vouches for right now).
    gate.release();
    const holderAnswer = await holder;
    const bulksDuringSuspension = (): number => standIn.requests.filter((request) => request.url.startsWith('/_bulk')).length;
    // A negative cannot be awaited: the bulk gets 500 ms while the link is down — on the broken
    // proxy the auto-id item reaches the cluster within a millisecond of the hand-over.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const sentWhileSuspended = bulksDuringSuspension();
    const stillSuspended = proxy.locks.state() === 'suspended';

    link.unfreeze();
    const answer = await bulk;

    expect(stillSuspended).toBe(true);
    expect(holderAnswer.kind === 'answered' && holderAnswer.answer.status).toBe(201);
    expect(sentWhileSuspended).toBe(0);
    const bulkRequests = standIn.requests.filter((request) => request.url.startsWith('/_bulk'));
    expect(bulkRequests).toHaveLength(1);
    expect(bulkRequests[0]?.body.toString()).toBe(body);
    expect(answer.kind === 'answered' && answer.answer.status).toBe(200);
    const items = answer.kind === 'answered' ? (JSON.parse(answer.answer.body) as { items: Record<string, { status: number }>[] }).items : [];
    expect(items.map((item) => Object.values(item)[0]?.status)).toEqual([200, 201]);
    expect(standIn.document('subbulk', 'held')?.source).toEqual({ from: 'bulk' });
    expect(standIn.overlaps.count).toBe(0);
  }, 60_000);
});
