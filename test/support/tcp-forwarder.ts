import { type Server, type Socket, connect, createServer } from 'node:net';

/**
 * A loopback TCP forwarder between a client and a server, able to misbehave on demand:
 * - `freeze()`: stop moving bytes both ways and hold new connections (a silent network
 *   partition: the client notices only by its own timeouts); `unfreeze()` resumes.
 * - `dropAll()`: reset every open connection (the client sees an immediate disconnect).
 * - `dropOnNextReply()`: the next bytes from the server are discarded and the connection is
 *   reset, i.e. a request reaches the server but its reply is lost.
 */
export class TcpForwarder {
  readonly port: number;
  private readonly server: Server;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private frozen = false;
  private readonly held: Socket[] = [];
  private dropReply = false;
  private readonly targetHost: string;
  private readonly targetPort: number;
  connections = 0;

  private constructor(server: Server, port: number, targetHost: string, targetPort: number) {
    this.server = server;
    this.port = port;
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    server.on('connection', (socket) => this.accept(socket));
  }

  static async start(target: string): Promise<TcpForwarder> {
    const [host, portText] = target.split(',')[0]!.split(':');
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('forwarder has no port');
    return new TcpForwarder(server, address.port, host ?? '127.0.0.1', Number(portText));
  }

  get connectString(): string {
    return `127.0.0.1:${this.port}`;
  }

  get openConnections(): number {
    return this.pairs.size;
  }

  /** Connections accepted while frozen and not yet passed on. */
  get heldConnections(): number {
    return this.held.length;
  }

  freeze(): void {
    this.frozen = true;
    for (const { client, upstream } of this.pairs) {
      client.pause();
      upstream.pause();
    }
  }

  unfreeze(): void {
    this.frozen = false;
    for (const { client, upstream } of this.pairs) {
      client.resume();
      upstream.resume();
    }
    for (const socket of this.held.splice(0)) this.accept(socket);
  }

  dropAll(): void {
    for (const pair of this.pairs) this.destroyPair(pair);
    for (const socket of this.held.splice(0)) socket.destroy();
  }

  dropOnNextReply(): void {
    this.dropReply = true;
  }

  async close(): Promise<void> {
    this.frozen = false;
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.frozen) {
      this.held.push(client);
      client.on('error', () => undefined);
      return;
    }
    this.connections++;
    const upstream = connect({ host: this.targetHost, port: this.targetPort });
    const pair = { client, upstream };
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (this.dropReply) {
        this.dropReply = false;
        this.destroyPair(pair);
        return;
      }
      client.write(chunk);
    });
    const close = (): void => this.destroyPair(pair);
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }

  private destroyPair(pair: { client: Socket; upstream: Socket }): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.resetAndDestroy();
    pair.upstream.destroy();
  }
}
