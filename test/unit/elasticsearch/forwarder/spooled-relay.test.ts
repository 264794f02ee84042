import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { spooledRelaySink, type SpoolLimits, type SpooledRelay } from '../../../../src/elasticsearch/forwarder/spooled-relay.js';

const CHUNK = 16 * 1024;
const CHUNKS = 256;

/** Chunk n is filled with byte n % 251, so an answer out of order or with a gap shows. */
function chunkOf(n: number): Buffer {
  return Buffer.alloc(CHUNK, n % 251);
}

interface Harness {
  readonly relay: SpooledRelay;
  readonly client: Socket;
  /** Starts reading (once); what was read so far. */
  readonly received: () => Buffer;
  readonly closed: Promise<void>;
  readonly givenUp: string[];
}

/** A server whose one response is fed by the test through the relay, and a client that reads nothing until told. */
async function relayToRawClient(limits: SpoolLimits): Promise<Harness> {
  const givenUp: string[] = [];
  let respond: (res: ServerResponse) => void = () => undefined;
  const responded = new Promise<ServerResponse>((resolve) => (respond = resolve));
  const listening = createServer((_req, res) => respond(res));
  server = listening;
  listening.listen(0, '127.0.0.1');
  await once(listening, 'listening');
  const address = listening.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const client = connect(address.port, '127.0.0.1');
  const chunks: Buffer[] = [];
  client.pause();
  const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
  client.on('error', () => undefined);
  client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  const res = await responded;
  const relay = spooledRelaySink(res, limits, (reason) => givenUp.push(reason));
  let reading = false;
  return {
    relay,
    client,
    closed,
    givenUp,
    received: () => {
      if (!reading) {
        reading = true;
        client.on('data', (chunk: Buffer) => chunks.push(chunk));
        client.resume();
      }
      return Buffer.concat(chunks);
    },
  };
}

let server: Server | undefined;
let dir: string | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Feeds the answer as undici does: the next chunk only once the sink took the last one or called `resume`. */
async function feed(relay: SpooledRelay, total: number): Promise<void> {
  let resume: () => void = () => undefined;
  let resumed: Promise<void> = Promise.resolve();
  relay.sink.head(200, ['content-type', 'application/octet-stream', 'content-length', String(total * CHUNK)], '', () => resume());
  for (let n = 0; n < total; n++) {
    await resumed;
    if (!relay.sink.data(chunkOf(n))) resumed = new Promise((resolve) => (resume = resolve));
  }
  await resumed;
  relay.sink.end();
}

describe('the spooled relay of a streamed answer', () => {
  it('is over when the answer is, though the client read nothing, and delivers it whole and in order afterwards from memory and the file', async () => {
    dir = await mkdtemp(join(tmpdir(), 'spool-test-'));
    const harness = await relayToRawClient({ memoryBytes: 64 * 1024, clientIdleMs: 30_000, fileStallMs: 30_000, dir });
    await feed(harness.relay, CHUNKS);
    expect(await harness.relay.over).toBeNull();
    // The temporary file has no name in the directory while it is used.
    expect(await readdir(dir)).toEqual([]);

    harness.received();
    await harness.relay.delivered;
    await vi.waitFor(() => expect(harness.received().length).toBeGreaterThanOrEqual(CHUNKS * CHUNK));
    const raw = harness.received();
    const body = raw.subarray(raw.indexOf('\r\n\r\n') + 4);
    expect(body.length).toBe(CHUNKS * CHUNK);
    for (let n = 0; n < CHUNKS; n++) expect(body[n * CHUNK], `chunk ${n}`).toBe(n % 251);
    expect(harness.givenUp).toEqual([]);
  });

  it('cuts the client, and still lets the answer end, when the temporary file cannot be made', async () => {
    const missing = join(tmpdir(), `spool-test-missing-${process.pid}`, 'nowhere');
    const harness = await relayToRawClient({ memoryBytes: 64 * 1024, clientIdleMs: 30_000, fileStallMs: 30_000, dir: missing });
    await feed(harness.relay, CHUNKS);
    expect(await harness.relay.over).toBeNull();
    await harness.relay.delivered;
    expect(harness.givenUp).toEqual(['the answer could not be kept in a temporary file']);
    harness.received();
    await harness.closed;
  });

  it('closes the connection of a client that takes nothing for the idle time', async () => {
    dir = await mkdtemp(join(tmpdir(), 'spool-test-'));
    const harness = await relayToRawClient({ memoryBytes: 64 * 1024, clientIdleMs: 200, fileStallMs: 30_000, dir });
    await feed(harness.relay, CHUNKS);
    expect(await harness.relay.over).toBeNull();
    await harness.relay.delivered;
    expect(harness.givenUp).toEqual(['the client took no byte of its answer for 200ms']);
  });
});
