/**
 * `npm run bench:multi -- [--creates N] [--rounds R]`: N ephemeral creates as ONE multi against N
 * creates pipelined from one session (all sent at once, awaited together), alternating, on a
 * ZooKeeper of its own (nothing else writes to it, so the server's zxid counts transactions).
 * Prints per-round wall times, the median ratio and the zxids each way consumed, in one run.
 * A measurement for docs/internals/zookeeper-addon.md, not a test: only the ratio within one run means anything.
 */
import { parseArgs } from 'node:util';
import { median } from './load-spec.js';
import { connectRawClient } from '../test/support/zk-raw-client.js';
import type { ZkClient } from '../src/zookeeper-client/zk-client.js';
import { fourLetterWord, startZooKeeper } from '../test/support/zookeeper-server.js';

interface Sample {
  readonly ms: number;
  readonly zxids: number;
}

const { values } = parseArgs({ options: { creates: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '7' } } });
const CREATES = Number(values.creates);
const ROUNDS = Number(values.rounds);

async function serverZxid(port: number): Promise<number> {
  const match = /Zxid: (0x[0-9a-f]+)/i.exec(await fourLetterWord(port, 'srvr'));
  if (match?.[1] === undefined) throw new Error('no Zxid in srvr');
  return Number.parseInt(match[1], 16);
}

async function measure(port: number, work: () => Promise<unknown>): Promise<Sample> {
  const before = await serverZxid(port);
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  return { ms, zxids: (await serverZxid(port)) - before };
}

function paths(parent: string): string[] {
  return Array.from({ length: CREATES }, (_, i) => `${parent}/n${i}`);
}

async function asOneMulti(client: ZkClient, parent: string): Promise<void> {
  await client.multi(paths(parent).map((path) => ({ type: 'create' as const, path, data: 'x', mode: 'ephemeral' as const })));
}

async function pipelined(client: ZkClient, parent: string): Promise<void> {
  await Promise.all(paths(parent).map((path) => client.create(path, 'x', 'ephemeral')));
}

/** Not measured: removes a round's nodes in one transaction so the next round starts alike. */
async function clear(client: ZkClient, parent: string): Promise<void> {
  await client.multi([...paths(parent).map((path) => ({ type: 'delete' as const, path })), { type: 'delete', path: parent }]);
}

async function main(): Promise<void> {
  const zk = await startZooKeeper(1, { jvm: 'production' });
  const port = zk.nodes[0]!.clientPort;
  const connection = await connectRawClient(zk.connectString, 10_000);
  const client = connection.client;
  const multi: Sample[] = [];
  const single: Sample[] = [];
  try {
    for (let round = 0; round <= ROUNDS; round++) {
      // Round 0 warms up both ways (JIT, server caches) and is not counted.
      for (const [name, samples, run] of [
        ['multi', multi, asOneMulti],
        ['pipelined', single, pipelined],
      ] as const) {
        const parent = `/bench-${name}-${round}`;
        await client.create(parent, '', 'persistent');
        const sample = await measure(port, () => run(client, parent));
        if (round > 0) samples.push(sample);
        await clear(client, parent);
      }
    }
  } finally {
    await connection.close();
    await zk.stop();
  }
  const ratios = multi.map((sample, i) => (single[i]?.ms ?? Number.NaN) / sample.ms);
  console.log(`${CREATES} ephemeral creates, ${ROUNDS} rounds (after a warm-up round), one session, ZooKeeper on loopback`);
  console.log(`one multi:  ms ${multi.map((s) => s.ms.toFixed(1)).join(', ')}  (median ${median(multi.map((s) => s.ms)).toFixed(1)}), zxids per round ${median(multi.map((s) => s.zxids))}`);
  console.log(`pipelined:  ms ${single.map((s) => s.ms.toFixed(1)).join(', ')}  (median ${median(single.map((s) => s.ms)).toFixed(1)}), zxids per round ${median(single.map((s) => s.zxids))}`);
  console.log(`pipelined / multi wall time: median ${median(ratios).toFixed(1)}x (per round: ${ratios.map((r) => r.toFixed(1)).join(', ')})`);
}

await main();
