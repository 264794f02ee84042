import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { captureLogs, exchange, type CapturedLogs, type Outcome } from '../faults/fault-kit.js';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';

const DOCS = 20;
const ITEMS_PER_DOC = 1_000;
/** Long ids make a long answer: 20,000 items answer with 11.3 MB, far past loopback’s socket buffers. */
const idOf = (doc: number): string => `${'x'.repeat(400)}-${doc}`;

function statusOf(outcome: Outcome): number {
  return outcome.kind === 'answered' ? outcome.answer.status : 0;
}

/** A bulk of ITEMS_PER_DOC index items for each of DOCS documents, interleaved; item j writes `{"n":j}`. */
function bigBulk(index: string): string {
  const lines: string[] = [];
  for (let j = 0; j < DOCS * ITEMS_PER_DOC; j++) lines.push(JSON.stringify({ index: { _index: index, _id: idOf(j % DOCS) } }), JSON.stringify({ n: j }));
  return `${lines.join('\n')}\n`;
}

/**
 * A client that sends its request and then reads nothing until told: its socket is never read
 * from, so the kernel's buffers fill and the proxy cannot hand it more of the answer.
 */
class UnreadingClient {
  private readonly received: Buffer[] = [];
  readonly ended: Promise<void>;

  private constructor(private readonly socket: Socket) {
    socket.pause();
    this.ended = new Promise((resolve) => {
      socket.once('close', () => resolve());
      socket.on('error', () => undefined);
    });
  }

  static async post(baseUrl: string, path: string, body: string): Promise<UnreadingClient> {
    const { hostname, port } = new URL(baseUrl);
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const client = new UnreadingClient(socket);
    const bytes = Buffer.from(body);
    socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/x-ndjson\r\nContent-Length: ${bytes.length}\r\n\r\n`);
    socket.write(bytes);
    return client;
  }

  /** Starts reading; resolves with everything the connection carried until the proxy or the answer ended it. */
  async readToEnd(): Promise<{ readonly status: number; readonly body: Buffer; readonly complete: boolean }> {
    this.socket.on('data', (chunk: Buffer) => {
      this.received.push(chunk);
      if (answerOf(Buffer.concat(this.received)).complete) this.socket.destroy();
    });
    this.socket.resume();
    await this.ended;
    return answerOf(Buffer.concat(this.received));
  }
}

/** Status line and Content-Length body of one HTTP/1.1 answer (the stand-in and the proxy frame bulk answers by length). */
function answerOf(raw: Buffer): { readonly status: number; readonly body: Buffer; readonly complete: boolean } {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd < 0) return { status: 0, body: Buffer.alloc(0), complete: false };
  const head = raw.toString('latin1', 0, headEnd);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? -1);
  const body = raw.subarray(headEnd + 4);
  return { status, body, complete: length >= 0 && body.length >= length };
}

/**
 * A bulk sent whole under all its locks streams Elasticsearch's answer back. Its locks are released
 * once Elasticsearch has answered in full, whether or not its client reads: what the client has
 * not taken waits in memory up to `proxy.answer.buffer.bytes`, the rest in a temporary file, and
 * is delivered as the client reads. A client that takes nothing of it for the client idle time
 * has its connection closed.
 */
describe.each(LOCK_BACKENDS)('a client that does not read its streamed bulk answer ($name locks)', (locks) => {
  let stack: WriteStack | undefined;
  let logs: CapturedLogs;

  const start = async (clientIdleMs?: number): Promise<WriteStack> => {
    logs = captureLogs('warn');
    stack = await startWriteStack({
      ...locks.stackLocks(),
      proxies: 2,
      logger: logs.logger,
      settings: { proxy: { maxBodyBytes: 64 * 1024 * 1024, answerBufferBytes: 256 * 1024 }, lock: { foregroundTimeoutMs: 5_000 } },
      ...(clientIdleMs !== undefined ? { edge: { bodyIdleTimeoutMs: clientIdleMs } } : {}),
    });
    return stack;
  };
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('holds no lock once Elasticsearch has answered: another writer proceeds, and the client still gets the whole answer when it reads', async () => {
    const { urls, standIn } = await start();
    const [first = '', second = ''] = urls;
    const lastItem = DOCS * ITEMS_PER_DOC - 1;
    const client = await UnreadingClient.post(first, '/_bulk', bigBulk('ur'));
    await standIn.waitForApplied((write) => write.item === lastItem);

    // Every document of the bulk is writable from the other proxy while the client reads nothing.
    for (let doc = 0; doc < DOCS; doc++) {
      expect(statusOf(await exchange(`${second}/ur/_doc/${idOf(doc)}`, { method: 'PUT', body: JSON.stringify({ next: doc }) }))).toBe(200);
    }

    const answer = await client.readToEnd();
    expect(answer.status).toBe(200);
    expect(answer.complete).toBe(true);
    expect(answer.body.length).toBeGreaterThan(8 * 1024 * 1024);
    const parsed = JSON.parse(answer.body.toString('utf8')) as { errors: boolean; items: { index: { _id: string; status: number } }[] };
    expect(parsed.errors).toBe(false);
    expect(parsed.items).toHaveLength(DOCS * ITEMS_PER_DOC);
    expect(parsed.items.every((item, j) => item.index._id === idOf(j % DOCS))).toBe(true);
    for (let doc = 0; doc < DOCS; doc++) {
      const history = standIn.history('ur', idOf(doc));
      expect(history).toHaveLength(ITEMS_PER_DOC + 1);
      expect(history.at(-1)?.body).toEqual({ next: doc });
      expect(standIn.document('ur', idOf(doc))?.source).toEqual({ next: doc });
    }
  });

  it('closes the connection of a client that takes nothing of its answer for the client idle time, and holds no lock meanwhile', async () => {
    const { urls, standIn } = await start(500);
    const [first = '', second = ''] = urls;
    const client = await UnreadingClient.post(first, '/_bulk', bigBulk('un'));
    await standIn.waitForApplied((write) => write.item === DOCS * ITEMS_PER_DOC - 1);
    expect(statusOf(await exchange(`${second}/un/_doc/${idOf(0)}`, { method: 'PUT', body: '{"next":0}' }))).toBe(200);

    await vi.waitFor(() => expect(logs.lines().some((line) => String(line.msg).includes('took no byte of its answer'))).toBe(true), { timeout: 10_000 });
    const answer = await client.readToEnd();
    expect(answer.status).toBe(200);
    expect(answer.complete).toBe(false);
    expect(standIn.document('un', idOf(0))?.source).toEqual({ next: 0 });
  });
});
