import { performance } from 'node:perf_hooks';
import type { ZkClient } from '../src/zookeeper/zk-client.js';
import { connectRawClient } from '../test/support/zk-raw-client.js';
import { percentile } from './load.js';
import { BENCH_ROOT, benchLockData, ensureBenchRoot } from './bench-lock-nodes.js';

/**
 * What ZooKeeper itself costs one hand-over of a document lock between two processes, in the
 * proxy's node layout: the holder gives `privateLock` back and queues again in one transaction
 * ([create its new queue entry, delete privateLock, delete its old entry], as a yield does), the
 * waiter's data watch on privateLock fires, and the waiter takes it ([getChildren2, create
 * privateLock] sent together, as its arbitration does). Two commits and a watch event: the floor
 * of a cross-process hand-over. Two raw sessions in one process, so no proxy's work is in it.
 */
export interface HandOverFloor {
  /** From the holder's transaction sent to the waiter's create answered (p50, ms). */
  readonly handOverP50Ms: number;
  readonly handOverP99Ms: number;
}

const ROOT = `${BENCH_ROOT}/handover-floor`;
const DATA = benchLockData('PUT /bench-hot/_doc/hot-0');
const SESSION_TIMEOUT_MS = 10_000;

interface Side {
  readonly client: ZkClient;
  /** This side's current queue entry (a name under the document), if any. */
  entry: string | null;
}

/** Resolves once the watched node is deleted; `armed` once the watch is left on the existing node. */
function watchDeletion(client: ZkClient, path: string): { readonly armed: Promise<unknown>; readonly deleted: Promise<void> } {
  let deleted = (): void => undefined;
  const gone = new Promise<void>((resolve) => (deleted = resolve));
  const armed = client.getWatched(path, (type) => {
    if (type === 'deleted') deleted();
  });
  return { armed, deleted: gone };
}

async function handOver(holder: Side, waiter: Side, docPath: string): Promise<number> {
  const privatePath = `${docPath}/privateLock`;
  const watch = watchDeletion(waiter.client, privatePath);
  await watch.armed;
  const start = performance.now();
  const yielded = holder.client.multi([
    { type: 'create', path: `${docPath}/fg-`, data: DATA, mode: 'ephemeralSequential' },
    { type: 'delete', path: privatePath },
    ...(holder.entry === null ? [] : [{ type: 'delete' as const, path: `${docPath}/${holder.entry}` }]),
  ]);
  await watch.deleted;
  await Promise.all([waiter.client.getChildren2(docPath), waiter.client.create2(privatePath, DATA, 'ephemeral')]);
  const elapsed = performance.now() - start;
  const [created] = await yielded;
  holder.entry = created?.path?.split('/').at(-1) ?? null;
  return elapsed;
}

/** `rounds` hand-overs back and forth after `warmupRounds`, one after the other. */
export async function measureHandOverFloor(zookeeper: string, { rounds = 500, warmupRounds = 200 } = {}): Promise<HandOverFloor> {
  const a = await connectRawClient(zookeeper, SESSION_TIMEOUT_MS);
  const b = await connectRawClient(zookeeper, SESSION_TIMEOUT_MS);
  try {
    await ensureBenchRoot(a.client, ROOT);
    const docPath = `${ROOT}/doc-${Date.now().toString(36)}`;
    await a.client.create(docPath, '', 'container');
    await a.client.create(`${docPath}/privateLock`, DATA, 'ephemeral');
    const sides: [Side, Side] = [
      { client: a.client, entry: null },
      { client: b.client, entry: null },
    ];
    const times: number[] = [];
    for (let round = 0; round < warmupRounds + rounds; round++) {
      const holder = sides[round % 2]!;
      const waiter = sides[(round + 1) % 2]!;
      const elapsed = await handOver(holder, waiter, docPath);
      if (round >= warmupRounds) times.push(elapsed);
    }
    times.sort((x, y) => x - y);
    return { handOverP50Ms: percentile(times, 50), handOverP99Ms: percentile(times, 99) };
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}
