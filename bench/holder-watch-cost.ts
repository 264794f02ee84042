/**
 * `npm run bench:watch -- [--cycles N] [--loops L] [--rounds R]`: the client CPU of a single
 * write's ZooKeeper work — a new document's container and privateLock in one transaction, the
 * holder watch, 2 ms held, both deleted in one transaction — done by L loops at once on one
 * session, N cycles per round, on a ZooKeeper of its own. Four ways alternate round by round in
 * one process: the holder watch alone (an exists, no owner check); neither; the owner check alone
 * (the grant's transaction also sets the document node's data, and the release deletes the
 * document node by the version that left: owner-token.ts); the owner check and the watch, as the
 * engine does it. Prints µs of this process's CPU per cycle, each round, the median and the range.
 * A measurement for docs/performance.md, not a test: only the ways' figures within one run compare.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { median } from './load-spec.js';
import type { ZkClient } from '../src/zookeeper-client/zk-client.js';
import { connectRawClient } from '../test/support/zk-raw-client.js';
import { startZooKeeper } from '../test/support/zookeeper-server.js';

type Way = 'watch' | 'neither' | 'owner check' | 'owner check + watch';

const { values } = parseArgs({ options: { cycles: { type: 'string', default: '3000' }, loops: { type: 'string', default: '16' }, rounds: { type: 'string', default: '5' } } });
const CYCLES = Number(values.cycles);
const LOOPS = Number(values.loops);
const ROUNDS = Number(values.rounds);
const WAYS: readonly Way[] = ['watch', 'neither', 'owner check', 'owner check + watch'];
const HELD_MS = 2;
// About the size of a lock node's data (the holder's description), which getData sends back.
const LOCK_DATA = 'x'.repeat(200);

/** The watch as the engine arms it: an exists sent right after the grant, not awaited, its callback ignoring our own release. */
function watch(client: ZkClient, path: string, czxid: number): void {
  const ignore = (): void => undefined;
  void client.existsWatched(path, ignore).then((stat) => stat?.czxid === czxid, ignore);
}

async function cycle(client: ZkClient, way: Way, doc: string): Promise<void> {
  const lock = `${doc}/privateLock`;
  const ownerCheck = way === 'owner check' || way === 'owner check + watch';
  const created = await client.multi([
    { type: 'create', path: doc, data: '', mode: 'container' },
    { type: 'create', path: lock, data: LOCK_DATA, mode: 'ephemeral' },
    ...(ownerCheck ? [{ type: 'setData' as const, path: doc, data: '', version: -1 }] : []),
  ]);
  if (way === 'watch' || way === 'owner check + watch') watch(client, lock, created[1]?.stat?.czxid ?? 0);
  // The grant's token: the document's data version its setData left (0 without one).
  const token = ownerCheck ? (created[2]?.stat?.version ?? 0) : 0;
  await sleep(HELD_MS);
  await client.multi([
    { type: 'delete', path: lock, version: 0 },
    { type: 'delete', path: doc, version: token },
  ]);
}

/** CPU µs per cycle of `CYCLES` cycles, `LOOPS` at a time. */
async function round(client: ZkClient, way: Way, prefix: string): Promise<number> {
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      while (next < CYCLES) await cycle(client, way, `${prefix}-${next++}`);
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CYCLES;
}

async function main(): Promise<void> {
  const zk = await startZooKeeper(1, { jvm: 'production' });
  const connection = await connectRawClient(zk.connectString, 10_000);
  const samples = new Map<Way, number[]>(WAYS.map((way) => [way, []]));
  try {
    await connection.client.create('/watch-cost', '', 'persistent');
    for (let r = 0; r <= ROUNDS; r++) {
      // Round 0 warms up every way (JIT, server caches) and is not counted.
      for (const way of WAYS) {
        const us = await round(connection.client, way, `/watch-cost/r${r}-${WAYS.indexOf(way)}`);
        if (r > 0) samples.get(way)?.push(us);
      }
    }
  } finally {
    await connection.close();
    await zk.stop();
  }
  console.log(`${CYCLES} cycles a round, ${LOOPS} loops at once, ${ROUNDS} rounds after a warm-up round; µs of client CPU per cycle`);
  for (const [way, list] of samples) {
    const range = `${Math.min(...list).toFixed(1)}–${Math.max(...list).toFixed(1)}`;
    console.log(`${way.padEnd(20)} median ${median(list).toFixed(1)}  range ${range}  (rounds: ${list.map((us) => us.toFixed(1)).join(', ')})`);
  }
}

await main();
