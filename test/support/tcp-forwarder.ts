import { type Server, type Socket, connect, createServer } from 'node:net';
import { PacketSplitter, ZK_OPCODE, replyXid, requestHeader } from './zookeeper-frames.js';

/**
 * A loopback TCP forwarder between a client and a server, able to misbehave on demand:
 * - `freeze()`: stop moving bytes both ways and hold new connections (a silent network
 *   partition: the client notices only by its own timeouts); `unfreeze()` resumes.
 * - `dropAll()`: reset every open connection (the client sees an immediate disconnect).
 * - `holdReplies()`: on the open connections, stop passing the server's bytes on while the
 *   client's still go through (its requests run, their answers wait); `passReplies()` lets them
 *   through.
 * - `dropOnNextReply()`: the next bytes from the server are discarded and the connection is
 *   reset, i.e. a request reaches the server but its reply is lost.
 * - `dropReplyTo(opcodes)`: the same for the reply to the next ZooKeeper request of one of these
 *   types (see zookeeper-frames.ts), optionally freezing right after, so the client cannot
 *   reconnect until `unfreeze()` (the test acts in between).
 * - `dropRequestTo(opcodes)`: the next ZooKeeper request of one of these types never reaches the
 *   server: the connection is reset when it arrives (the request lost before the server).
 * - `answerWithError(opcodes, rc, { times })`: the reply to the next such request (the next `times`) reaches the client as a
 *   bare reply header carrying `rc`, the connection intact: the server ran the request, the client
 *   sees the whole request refused (as with SESSIONMOVED, or an answer it could not read). With
 *   `{ applied: false }` the transaction reaches the server with its first version check made to
 *   fail, so nothing of it is applied (as with THROTTLEDOP).
 */
export class TcpForwarder {
  readonly port: number;
  private readonly server: Server;
  private readonly pairs = new Set<Pair>();
  private replyTrap: ReplyTrap | null = null;
  private requestTrap: { readonly opcodes: readonly number[]; readonly resolve: () => void } | null = null;
  private readonly awaitingReply = new Set<number>();
  /** Replies replaced by an error so far (`answerWithError`). */
  errorAnswers = 0;
  /** Most ZooKeeper requests (not pings) sent and not answered yet at any moment, over all connections. */
  peakOutstanding = 0;
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

  holdReplies(): void {
    for (const { upstream } of this.pairs) upstream.pause();
  }

  passReplies(): void {
    for (const { upstream } of this.pairs) upstream.resume();
  }

  dropAll(): void {
    for (const pair of this.pairs) this.destroyPair(pair);
    for (const socket of this.held.splice(0)) socket.destroy();
  }

  dropOnNextReply(): void {
    this.dropReply = true;
  }

  /** Resolves once the reply was dropped (the request was applied by the server). */
  dropReplyTo(opcodes: readonly number[], options: { readonly freezeAfter?: boolean } = {}): Promise<void> {
    return new Promise((resolve) => {
      this.replyTrap = { opcodes, freezeAfter: options.freezeAfter === true, xid: null, pair: null, resolve, replaceWith: null, notApplied: false, times: 1 };
    });
  }

  /** Resolves once the connection carrying such a request was reset, the request not passed on. */
  dropRequestTo(opcodes: readonly number[]): Promise<void> {
    return new Promise((resolve) => {
      this.requestTrap = { opcodes, resolve };
    });
  }

  /**
   * Resolves once the client was sent the error in place of the reply; with `times`, once it was
   * sent that many times (to that many such requests, one after the other).
   */
  answerWithError(opcodes: readonly number[], rc: number, options: { readonly applied?: boolean; readonly times?: number } = {}): Promise<void> {
    return new Promise((resolve) => {
      this.replyTrap = { opcodes, freezeAfter: false, xid: null, pair: null, resolve, replaceWith: rc, notApplied: options.applied === false, times: options.times ?? 1 };
    });
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
    const pair: Pair = { client, upstream, requests: new PacketSplitter(), replies: new PacketSplitter(), forwardedOfPending: 0 };
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (this.watchRequests(pair, chunk)) {
        const trap = this.requestTrap;
        this.requestTrap = null;
        this.destroyPair(pair);
        trap?.resolve();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (this.dropReply) {
        this.dropReply = false;
        this.destroyPair(pair);
        return;
      }
      if (this.replyTrap !== null && this.replyTrap.replaceWith !== null && this.replyTrap.pair === pair) {
        this.forwardReplacing(pair, chunk, this.replyTrap);
        return;
      }
      const trapped = this.trappedReplyStart(pair, chunk);
      if (trapped === null) {
        client.write(chunk);
        return;
      }
      if (trapped > 0) client.write(chunk.subarray(0, trapped));
      this.springTrap(pair);
    });
    const close = (): void => this.destroyPair(pair);
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }

  /** Notes the requests in `chunk`; true when one of them springs the request trap (the chunk must not go on). */
  private watchRequests(pair: Pair, chunk: Buffer): boolean {
    const packets = pair.requests.push(chunk);
    const headers = packets.map(({ packet, handshake }) => (handshake ? null : requestHeader(packet)));
    for (const header of headers) if (header !== null && header.xid >= 0) this.awaitingReply.add(header.xid);
    this.peakOutstanding = Math.max(this.peakOutstanding, this.awaitingReply.size);
    const requestTrap = this.requestTrap;
    if (requestTrap !== null && headers.some((header) => header !== null && requestTrap.opcodes.includes(header.type))) return true;
    const trap = this.replyTrap;
    if (trap === null || trap.xid !== null) return false;
    for (const { packet, handshake } of packets) {
      const header = handshake ? null : requestHeader(packet);
      if (header === null || !trap.opcodes.includes(header.type)) continue;
      if (trap.notApplied) failFirstCheck(packet, chunk);
      trap.xid = header.xid;
      trap.pair = pair;
      // Its reply comes later; whatever of a reply this connection has begun already went out.
      pair.forwardedOfPending = pair.replies.pendingBytes.length;
      return false;
    }
    return false;
  }

  /** Offset in `chunk` where the trapped reply starts, or null when it is not in this chunk. */
  private trappedReplyStart(pair: Pair, chunk: Buffer): number | null {
    const packets = pair.replies.push(chunk);
    for (const { packet, handshake } of packets) {
      const xid = handshake ? null : replyXid(packet);
      if (xid !== null) this.awaitingReply.delete(xid);
    }
    const trap = this.replyTrap;
    if (trap === null || trap.pair !== pair) return null;
    for (const { packet, handshake, endInChunk } of packets) {
      if (!handshake && replyXid(packet) === trap.xid) return Math.max(0, endInChunk - 4 - packet.length);
    }
    return null;
  }

  /**
   * Forwards whole packets (an unfinished one waits for the rest), the trapped reply replaced by
   * its bare header with the trap's code. The bytes of a packet begun before the trap was set went
   * out as they came: only the rest of that packet follows.
   */
  private forwardReplacing(pair: Pair, chunk: Buffer, trap: ReplyTrap): void {
    for (const { packet, handshake } of pair.replies.push(chunk)) {
      const framed = Buffer.alloc(4 + packet.length);
      framed.writeInt32BE(packet.length, 0);
      packet.copy(framed, 4);
      const sentAlready = pair.forwardedOfPending;
      pair.forwardedOfPending = 0;
      const xid = handshake ? null : replyXid(packet);
      if (xid !== null) this.awaitingReply.delete(xid);
      if (xid === trap.xid && trap.replaceWith !== null && sentAlready === 0) {
        pair.client.write(bareReplyHeader(packet, trap.replaceWith));
        this.errorAnswers++;
        this.replyTrap = trap.times > 1 ? { ...trap, xid: null, pair: null, times: trap.times - 1 } : null;
        if (this.replyTrap === null) trap.resolve();
        continue;
      }
      pair.client.write(framed.subarray(sentAlready));
    }
    // Sprung (or waiting for its next request): what has come of the next packet goes out now, and the bytes as they come again.
    if (this.replyTrap?.pair !== pair) {
      pair.client.write(pair.replies.pendingBytes);
      pair.forwardedOfPending = pair.replies.pendingBytes.length;
    }
  }

  private springTrap(pair: Pair): void {
    const trap = this.replyTrap;
    this.replyTrap = null;
    if (trap?.freezeAfter === true) this.freeze();
    this.destroyPair(pair);
    trap?.resolve();
  }

  private destroyPair(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    pair.client.resetAndDestroy();
    pair.upstream.destroy();
  }
}

interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly requests: PacketSplitter;
  readonly replies: PacketSplitter;
  /** Bytes of the reply packet now being received that were passed on before packets were forwarded whole. */
  forwardedOfPending: number;
}

/**
 * Makes the server refuse a multi request at its first version check (a version no node has), in
 * `chunk` before it is forwarded: nothing of the transaction is applied. A multi is [xid, type]
 * then per op a MultiHeader (type:int32, done:bool, err:int32) and its request; the op bodies
 * are walked to find the check.
 */
function failFirstCheck(packet: Buffer, chunk: Buffer): void {
  const inChunk = packet.buffer === chunk.buffer && packet.byteOffset >= chunk.byteOffset && packet.byteOffset + packet.length <= chunk.byteOffset + chunk.length;
  if (!inChunk) throw new Error('forwarder: the request to change came in two reads');
  const bytes = (at: number): number => 4 + Math.max(0, packet.readInt32BE(at));
  for (let offset = 8; packet[offset + 4] === 0; ) {
    const type = packet.readInt32BE(offset);
    offset += 9;
    const afterPath = offset + bytes(offset);
    if (type === ZK_OPCODE.check) {
      packet.writeInt32BE(0x7fff_ffff, afterPath);
      return;
    }
    if (type === ZK_OPCODE.delete) offset = afterPath + 4;
    else if (type === ZK_OPCODE.setData) offset = afterPath + bytes(afterPath) + 4;
    else if (type === ZK_OPCODE.create || type === ZK_OPCODE.create2 || type === ZK_OPCODE.createContainer) offset = afterAcl(packet, afterPath + bytes(afterPath)) + 4;
    else throw new Error(`forwarder: cannot walk past op ${type}`);
  }
  throw new Error('forwarder: the multi has no check to fail');
}

/** The offset after a serialized ACL vector (count, then perms:int32, scheme:ustring, id:ustring each). */
function afterAcl(packet: Buffer, at: number): number {
  const count = packet.readInt32BE(at);
  let offset = at + 4;
  for (let i = 0; i < count; i++) {
    offset += 4;
    offset += 4 + packet.readInt32BE(offset);
    offset += 4 + packet.readInt32BE(offset);
  }
  return offset;
}

/** A reply's header (xid, zxid) with `rc` as its error and no body: the request refused as a whole. */
function bareReplyHeader(reply: Buffer, rc: number): Buffer {
  const header = Buffer.alloc(4 + 16);
  header.writeInt32BE(16, 0);
  reply.copy(header, 4, 0, 12);
  header.writeInt32BE(rc, 16);
  return header;
}

interface ReplyTrap {
  readonly opcodes: readonly number[];
  readonly freezeAfter: boolean;
  xid: number | null;
  pair: Pair | null;
  readonly resolve: () => void;
  /** null: drop the reply and the connection; a code: answer with it instead. */
  readonly replaceWith: number | null;
  /** The transaction's first check is made to fail at the server: nothing of it is applied. */
  readonly notApplied: boolean;
  /** Replies still to replace, this one included. */
  readonly times: number;
}
