import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import type { EsStandIn } from '../../support/es-stand-in.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { exchange, isElasticsearchError, type Outcome } from './fault-kit.js';

const UPSTREAM_TIMEOUT_MS = 500;
/** Far past loopback's socket buffers: the proxy cannot hand the whole body over while nobody reads. */
const BODY_BYTES = 24 * 1024 * 1024;

function statusOf(outcome: Outcome): number {
  return outcome.kind === 'answered' ? outcome.answer.status : 0;
}

/**
 * A TCP relay to the stand-in that, on the connection carrying a request line that starts with
 * `trap`, stops reading: an Elasticsearch node that accepted the connection and takes none of the
 * request body (a node in a long GC pause, a full receive queue). The first such request only.
 */
class NodeThatStopsReading {
  private armed = true;
  private readonly sockets = new Set<Socket>();

  private readonly server: Server;
  url = '';

  private constructor(target: EsStandIn, trap: string) {
    this.server = createServer((client) => this.relay(client, target.port, trap));
  }

  static async start(target: EsStandIn, trap: string): Promise<NodeThatStopsReading> {
    const node = new NodeThatStopsReading(target, trap);
    node.server.listen(0, '127.0.0.1');
    await once(node.server, 'listening');
    const address = node.server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    node.url = `http://127.0.0.1:${address.port}`;
    return node;
  }

  private relay(client: Socket, port: number, trap: string): void {
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => this.sockets.delete(socket));
    }
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    upstream.pipe(client);
    let trapped = false;
    client.on('data', (chunk: Buffer) => {
      if (!trapped && this.armed && chunk.toString('latin1').startsWith(trap)) {
        this.armed = false;
        trapped = true;
        client.pause();
      }
      if (!trapped) upstream.write(chunk);
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Sending a locked write's body is inside its lock hold. A node that stops reading it is bounded
 * by `proxy.upstream.timeout.ms` as a node that does not answer is: undici's `headersTimeout` runs
 * from the moment the request is handed to the connection, whether or not its body is out.
 */
describe.each(LOCK_BACKENDS)('an Elasticsearch node that stops reading a locked write body ($name locks)', (locks) => {
  let node: NodeThatStopsReading | undefined;
  let stack: WriteStack;

  beforeAll(async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      upstream: async (standIn) => (node = await NodeThatStopsReading.start(standIn, 'PUT /rb/_doc/big')).url,
      settings: { proxy: { upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS }, lock: { foregroundTimeoutMs: 5_000 } },
    });
  });
  afterAll(async () => {
    await stack?.close();
    await node?.close();
  });

  it('answers 504 upstream_timeout_exception, and the next writer to the document proceeds', async () => {
    const [url = ''] = stack.urls;
    const big = JSON.stringify({ v: 'big', pad: 'p'.repeat(BODY_BYTES) });
    const stuck = await exchange(`${url}/rb/_doc/big`, { method: 'PUT', body: big });
    expect(stuck.kind).toBe('answered');
    if (stuck.kind !== 'answered') return;
    expect(stuck.answer.status).toBe(504);
    expect(isElasticsearchError(stuck.answer, ['upstream_timeout_exception']), stuck.answer.body).toBe(true);

    expect(statusOf(await exchange(`${url}/rb/_doc/big`, { method: 'PUT', body: '{"v":"next"}' }))).toBe(201);
    expect(stack.standIn.document('rb', 'big')?.source).toEqual({ v: 'next' });
  });
});
