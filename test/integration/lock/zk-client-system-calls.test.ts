import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RawZkConnection, connectRawClient } from '../../../src/lock/zk-raw-client.js';
import { type ZooKeeperCluster, startZooKeeper } from '../../support/zookeeper-server.js';

/**
 * What one ZooKeeper request costs the process in system calls, read from this thread's own
 * counters (/proc/thread-self/io: the addon runs on the test file's thread). Only file reads
 * are counted there (socket calls are not), which is what shows the C client's habit of
 * resolving its server list again after every reply: each resolution seeds its random generator
 * from /dev/urandom, one read(2) per reply. The test runner's own thread reads now and then too,
 * so the fewest reads of several rounds counts.
 */
const ROUNDS = 5;
const REQUESTS_PER_ROUND = 100;

let zk: ZooKeeperCluster;
let connection: RawZkConnection;

beforeAll(async () => {
  zk = await startZooKeeper(1);
  connection = await connectRawClient(zk.connectString, 10_000);
});

afterAll(async () => {
  await connection?.close();
  await zk?.stop();
});

function fileReadsOfThisThread(): number {
  const match = /^syscr: (\d+)$/m.exec(readFileSync('/proc/thread-self/io', 'utf8'));
  if (match?.[1] === undefined) throw new Error('no syscr in /proc/thread-self/io');
  return Number(match[1]);
}

describe('the ZooKeeper client on a steady connection', () => {
  it('does not resolve the server names again after every reply', async () => {
    await connection.client.create('/resolution', 'x', 'persistent');
    const readsPerRound: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const before = fileReadsOfThisThread();
      for (let i = 0; i < REQUESTS_PER_ROUND; i++) expect((await connection.client.get('/resolution')).data.toString()).toBe('x');
      readsPerRound.push(fileReadsOfThisThread() - before);
    }
    expect(Math.min(...readsPerRound) / REQUESTS_PER_ROUND).toBeLessThan(0.1);
  });
});
