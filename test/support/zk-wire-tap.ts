import { type Server, type Socket, connect, createServer } from 'node:net';

/**
 * A loopback forwarder that reads the ZooKeeper wire protocol as it passes, for tests that must
 * see what a client does on the wire rather than what it reports about itself:
 * - `maxOutstanding`: the largest number of requests a connection had sent and not yet had
 *   answered (the client's pipelining depth);
 * - `requests`: how many requests of each op code went by;
 * - `holdReplies()` / `releaseReplies()`: the server's bytes wait in the tap meanwhile, so a test
 *   can act while a request is known to be outstanding (keep it short: pings wait too).
 *
 * Framing (ZooKeeper's jute protocol): every message is a 4-byte big-endian length and a body.
 * The first message each way is the connect handshake; after it, a request starts with
 * `xid:int32, type:int32` and a reply with `xid:int32, zxid:int64, err:int32`. Negative xids are
 * the protocol's own traffic (-1 watch notification, -2 ping, -4 auth, -8 set-watches) and are
 * not counted as requests of the application.
 */
export const ZK_OP = { create: 1, delete: 2, exists: 3, getData: 4, setData: 5, getChildren: 8, getChildren2: 12, check: 13, multi: 14, create2: 15, createContainer: 19 } as const;

export class ZkWireTap {
  readonly port: number;
  maxOutstanding = 0;
  readonly requests = new Map<number, number>();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private held: (() => void)[] | null = null;

  private constructor(server: Server, port: number, private readonly target: { host: string; port: number }) {
    this.server = server;
    this.port = port;
    server.on('connection', (socket) => this.accept(socket));
  }

  static async start(connectString: string): Promise<ZkWireTap> {
    const [host, port] = connectString.split(',')[0]!.split(':');
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('wire tap has no port');
    return new ZkWireTap(server, address.port, { host: host ?? '127.0.0.1', port: Number(port) });
  }

  get connectString(): string {
    return `127.0.0.1:${this.port}`;
  }

  count(op: number): number {
    return this.requests.get(op) ?? 0;
  }

  resetCounts(): void {
    this.maxOutstanding = 0;
    this.requests.clear();
  }

  holdReplies(): void {
    this.held ??= [];
  }

  /** Pieces of the server's answers waiting in the tap (some answer came since `holdReplies`). */
  get heldPieces(): number {
    return this.held?.length ?? 0;
  }

  releaseReplies(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const deliver of held) deliver();
  }

  async close(): Promise<void> {
    this.releaseReplies();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    const upstream = connect(this.target);
    this.sockets.add(client).add(upstream);
    let outstanding = 0;
    const fromClient = new FrameReader((frame) => {
      const xid = frame.readInt32BE(0);
      if (xid < 0) return;
      const op = frame.readInt32BE(4);
      this.requests.set(op, (this.requests.get(op) ?? 0) + 1);
      outstanding++;
      this.maxOutstanding = Math.max(this.maxOutstanding, outstanding);
    });
    const fromServer = new FrameReader((frame) => {
      if (frame.readInt32BE(0) >= 0) outstanding--;
    });
    client.on('data', (chunk: Buffer) => {
      fromClient.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      const deliver = (): void => {
        fromServer.push(chunk);
        if (!client.destroyed) client.write(chunk);
      };
      if (this.held === null) deliver();
      else this.held.push(deliver);
    });
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }
}

/** Splits a byte stream into length-prefixed frames; the first frame (the handshake) is skipped. */
class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  private handshakeSeen = false;

  constructor(private readonly onFrame: (frame: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 4) {
      const length = this.buffered.readInt32BE(0);
      if (this.buffered.length < 4 + length) return;
      const frame = this.buffered.subarray(4, 4 + length);
      this.buffered = this.buffered.subarray(4 + length);
      if (!this.handshakeSeen) this.handshakeSeen = true;
      else if (frame.length >= 8) this.onFrame(frame);
    }
  }
}
