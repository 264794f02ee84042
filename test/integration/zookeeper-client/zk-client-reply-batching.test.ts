import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';
import { type ZooKeeperCluster, startZooKeeper } from '../../support/zookeeper-server.js';

/**
 * How many event-loop iterations the replies to many outstanding requests need. The C client
 * reads one reply per `zookeeper_process`; the addon called it once per wake-up of its poll
 * handle, so a proxy busy with HTTP got one ZooKeeper reply per loop iteration and its requests
 * queued up behind each other (100-250 ms per reply under the fg-under-bg flood of the bench).
 * Here the loop is held still while the server answers, so that every reply is in the socket
 * before the first one is read; then the replies must come in a handful of iterations.
 */
const REQUESTS = 200;
/** Long enough for a local server to answer 200 reads, many times over. */
const LOOP_STALL_MS = 400;

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

/** Blocks this thread (and so its event loop) without spinning the CPU. */
function stallEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('the ZooKeeper client with many requests outstanding', () => {
  it('reads every reply that has arrived in one wake-up, not one reply per event-loop iteration', async () => {
    await connection.client.create('/batched', 'x', 'persistent');
    let iteration = 0;
    let counting = true;
    const countIterations = (): void => {
      iteration++;
      if (counting) setImmediate(countIterations);
    };
    const iterationsSeen = new Set<number>();
    const replies = Array.from({ length: REQUESTS }, () =>
      connection.client.get('/batched').then((node) => {
        iterationsSeen.add(iteration);
        return node.data.toString();
      }),
    );
    setImmediate(countIterations);
    stallEventLoop(LOOP_STALL_MS);
    const data = await Promise.all(replies);
    counting = false;
    expect(data.every((value) => value === 'x')).toBe(true);
    expect(iterationsSeen.size).toBeLessThan(REQUESTS / 10);
  });
});
