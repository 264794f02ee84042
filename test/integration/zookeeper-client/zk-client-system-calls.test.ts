import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';
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

/** `ss` (iproute2) prints TCP_INFO per socket; false when it is not installed. */
function ssAvailable(): boolean {
  try {
    execFileSync('ss', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Segments carrying data that the client's connection to `port` has sent (TCP_INFO, via `ss`). */
function dataSegmentsSentTo(port: number): number {
  const out = execFileSync('ss', ['-tinH', 'state', 'established', 'dport', `= :${port}`], { encoding: 'utf8' });
  const counts = [...out.matchAll(/data_segs_out:(\d+)/g)].map((match) => Number(match[1]));
  if (counts.length !== 1) throw new Error(`expected one connection to port ${port}, ss shows ${counts.length}:\n${out}`);
  return counts[0]!;
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

  // The C client sends a request's length and its body in two send calls: two segments on its
  // TCP_NODELAY socket. Our addon frames each request so that both go in one (zk-send-framing.c).
  it.runIf(ssAvailable() && process.platform === 'linux')('sends each request in one TCP segment, length and body together', async () => {
    const { client } = connection;
    const port = zk.nodes[0]!.clientPort;
    await client.create('/segments', 'x', 'persistent');
    const requests = 100;
    const before = dataSegmentsSentTo(port);
    for (let i = 0; i < requests; i++) {
      await client.create(`/segments/n${i}`, 'x', 'ephemeral');
      expect((await client.get(`/segments/n${i}`)).data.toString()).toBe('x');
      await client.delete(`/segments/n${i}`);
    }
    // Three requests per round, one after the other; a ping may add a segment now and then.
    expect((dataSegmentsSentTo(port) - before) / (3 * requests)).toBeLessThan(1.1);
  });
});
