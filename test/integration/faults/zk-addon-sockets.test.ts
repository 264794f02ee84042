import { type Server, type Socket, connect, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { newStats } from '../../../src/lock/lock-stats.js';
import { ZkClient } from '../../../src/zookeeper-client/zk-client.js';
import { restartNode, startZooKeeper } from '../../support/zookeeper-server.js';

/**
 * Sockets that Node opens while the ZooKeeper C client of the same process loses its connection
 * must keep working. The C client closes its socket and only then calls back; a socket opened by
 * that callback gets the lowest free descriptor number, typically the one just closed, while the
 * addon's poll handle still holds it: libuv then never registered the new socket, and stopping
 * the stale handle removed it from epoll. Such a socket connects and never hears an answer.
 * Here the server goes away (killed: its sockets close with a FIN, the C client reads the end of
 * the stream, as when a ZooKeeper server restarts).
 */
const SOCKETS = 8;
const ANSWER_WITHIN_MS = 5_000;

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function echoServer(): Promise<Server> {
  const server = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  return server;
}

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Resolves with what the echo server sent back, or with null when nothing came in time. */
function echoOf(socket: Socket): Promise<string | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ANSWER_WITHIN_MS);
    socket.once('data', (chunk) => {
      clearTimeout(timer);
      resolve(chunk.toString());
    });
    socket.once('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
}

async function connectedClient(servers: string): Promise<ZkClient> {
  const client = new ZkClient({ servers, sessionTimeoutMs: 10_000 }, newStats());
  const connected = new Promise<void>((resolve) => client.once('connect', resolve));
  client.connect();
  await connected;
  cleanups.push(() => client.close());
  return client;
}

describe('our ZooKeeper addon and the sockets of its process', () => {
  it('sockets opened while the C client drops its connection hear their answers', async () => {
    const echo = await echoServer();
    const zk = await startZooKeeper(1);
    cleanups.push(() => zk.stop());
    const client = await connectedClient(zk.connectString);

    const answers = new Promise<(string | null)[]>((resolve) => {
      client.once('connecting', () => {
        // Opened in the callback, as the lock engine's reaction to a lost connection may do.
        const sockets = Array.from({ length: SOCKETS }, (_, i) => {
          const socket = connect(portOf(echo), '127.0.0.1', () => socket.write(`ping ${i}`));
          cleanups.push(async () => void socket.destroy());
          return socket;
        });
        resolve(Promise.all(sockets.map(echoOf)));
      });
    });
    const reconnected = new Promise<void>((resolve) => client.once('connect', resolve));
    await zk.nodes[0]!.stop('SIGKILL');

    expect(await answers).toEqual(Array.from({ length: SOCKETS }, (_, i) => `ping ${i}`));
    // And the client is back on its session once the server is.
    await restartNode(zk.nodes[0]!);
    await reconnected;
    expect((await client.getChildren2('/')).children).toContain('zookeeper');
  });
});
