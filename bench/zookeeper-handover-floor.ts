import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createInterface, type Interface } from 'node:readline';
import { benchScript } from './bench-script.js';
import { numberField } from './child-process.js';
import type { ZkClient } from '../src/zookeeper-client/zk-client.js';
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
  readonly handOverMeanMs: number;
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
    const mean = times.reduce((sum, t) => sum + t, 0) / Math.max(1, times.length);
    return { handOverP50Ms: percentile(times, 50), handOverP99Ms: percentile(times, 99), handOverMeanMs: mean };
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}

/** A side process of the two-process floor and its stdout lines. */
interface SideProcess {
  readonly child: ChildProcess;
  readonly lines: AsyncIterator<string>;
  readonly reader: Interface;
}

function startSide(zookeeper: string, docPath: string, handOvers: number): SideProcess {
  const child = spawn(process.execPath, [...benchScript('./zookeeper-handover-side-process.ts'), JSON.stringify({ zookeeper, docPath, handOvers })], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const reader = createInterface({ input: child.stdout! });
  return { child, reader, lines: reader[Symbol.asyncIterator]() };
}

async function nextLine(side: SideProcess): Promise<unknown> {
  const { value, done } = await side.lines.next();
  if (done === true) throw new Error('hand-over side process ended early');
  return JSON.parse(String(value));
}

/**
 * The same hand-over between two processes, each with its own session (as two proxies are): each
 * takes privateLock when its entry is the lowest and gives it back at once with a yield's
 * transaction (zookeeper-handover-side-process.ts), `handOvers` times each. The mean time per
 * hand-over, with both processes woken up every time as the proxies are. `during`: started once
 * both sides are ready, together with their hand-overs, and awaited with them (a load the floor
 * is to be measured under).
 */
export async function measureTwoProcessHandOver(zookeeper: string, handOvers = 500, during?: () => Promise<unknown>): Promise<number> {
  const { client, close } = await connectRawClient(zookeeper, SESSION_TIMEOUT_MS);
  const docPath = `${ROOT}/two-${Date.now().toString(36)}`;
  try {
    await ensureBenchRoot(client, ROOT);
    await client.create(docPath, '', 'container');
  } finally {
    await close();
  }
  const sides = [startSide(zookeeper, docPath, handOvers), startSide(zookeeper, docPath, handOvers)];
  try {
    for (const side of sides) await nextLine(side);
    const load = during?.();
    for (const side of sides) side.child.stdin?.write('go\n');
    const elapsed = await Promise.all(sides.map(async (side) => numberField(await nextLine(side), 'elapsedMs')));
    await load;
    return Math.max(...elapsed) / (2 * handOvers);
  } finally {
    for (const side of sides) {
      side.reader.close();
      if (side.child.exitCode === null) side.child.kill('SIGTERM');
    }
  }
}
