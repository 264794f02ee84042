/**
 * One side of the two-process hand-over floor (zookeeper-handover-floor.ts), in its own process
 * and session as a proxy is. Argument: JSON `{ zookeeper, docPath, handOvers }`. Enters the
 * document's queue, prints `{"ready":true}`, waits for a line on stdin, then takes privateLock whenever its entry is the
 * lowest and privateLock is free, and gives it back at once the way a yield does
 * ([create its new entry, delete privateLock, delete its old entry]), `handOvers` times. Prints
 * `{ "elapsedMs": ... }` from its first take to its last yield, and exits.
 */
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { connectRawClient } from '../test/support/zk-raw-client.js';
import { isZkCode } from '../src/zookeeper-client/zk-errors.js';
import type { ZkClient } from '../src/zookeeper-client/zk-client.js';
import { numberField, stringField } from './child-process.js';
import { benchLockData } from './bench-lock-nodes.js';

const options: unknown = JSON.parse(process.argv[2] ?? '{}');
const docPath = stringField(options, 'docPath');
const handOvers = numberField(options, 'handOvers');
const privatePath = `${docPath}/privateLock`;
const DATA = benchLockData('PUT /bench-hot/_doc/hot-0');

function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function sequenceOf(entry: string): number {
  return Number(entry.slice(entry.lastIndexOf('-') + 1));
}

/** Resolves once our entry is the lowest and privateLock is free (a watch event, then a look). */
async function untilOurTurn(client: ZkClient, entry: string): Promise<void> {
  for (;;) {
    let changed = (): void => undefined;
    const event = new Promise<void>((resolve) => (changed = resolve));
    try {
      await client.getWatched(privatePath, changed);
      await event;
      continue;
    } catch (error) {
      if (!isZkCode(error, 'NONODE')) throw error;
    }
    const entries = await client.getChildrenWatched(docPath, changed);
    const lowest = Math.min(...entries.filter((name) => name !== 'privateLock').map(sequenceOf));
    if (sequenceOf(entry) === lowest && !entries.includes('privateLock')) return;
    await event;
  }
}

const { client, close } = await connectRawClient(stringField(options, 'zookeeper'), 10_000);
let entry = lastSegment(await client.create(`${docPath}/fg-`, DATA, 'ephemeralSequential'));
console.log(JSON.stringify({ ready: true }));
// Both sides queue before either takes privateLock: alone, one would hand it to itself.
await once(createInterface({ input: process.stdin }), 'line');
let started = 0;
for (let i = 0; i < handOvers; i++) {
  await untilOurTurn(client, entry);
  if (i === 0) started = performance.now();
  await Promise.all([client.getChildren2(docPath), client.create2(privatePath, DATA, 'ephemeral')]);
  const [created] = await client.multi([
    { type: 'create', path: `${docPath}/fg-`, data: DATA, mode: 'ephemeralSequential' },
    { type: 'delete', path: privatePath },
    { type: 'delete', path: `${docPath}/${entry}` },
  ]);
  entry = lastSegment(created?.path ?? '');
}
console.log(JSON.stringify({ elapsedMs: performance.now() - started }));
await close();
process.exit(0);
