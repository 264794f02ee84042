/**
 * Just enough of ZooKeeper's wire format for the test forwarder to tell requests and replies
 * apart: every packet is a 4-byte big-endian length and a body. The first packet each way is the
 * session handshake (no header); after it, a request starts `xid:int32 type:int32` and a reply
 * `xid:int32 zxid:int64 err:int32` (xid -1 = watch event, -2 = ping).
 */
export const ZK_OPCODE = {
  create: 1,
  delete: 2,
  exists: 3,
  getData: 4,
  setData: 5,
  getChildren: 8,
  getChildren2: 12,
  check: 13,
  multi: 14,
  create2: 15,
  createContainer: 19,
  getEphemerals: 103,
} as const;

/** Splits a byte stream into whole packets, across chunk boundaries. */
export class PacketSplitter {
  private pending: Buffer = Buffer.alloc(0);
  private seenHandshake = false;

  /** Packets completed by `chunk`, each with its offset in this chunk's end-aligned stream. */
  push(chunk: Buffer): { packet: Buffer; handshake: boolean; endInChunk: number }[] {
    const startOfPending = this.pending.length;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const packets: { packet: Buffer; handshake: boolean; endInChunk: number }[] = [];
    let offset = 0;
    while (this.pending.length - offset >= 4) {
      const length = this.pending.readInt32BE(offset);
      if (this.pending.length - offset - 4 < length) break;
      const packet = this.pending.subarray(offset + 4, offset + 4 + length);
      offset += 4 + length;
      packets.push({ packet, handshake: !this.seenHandshake, endInChunk: offset - startOfPending });
      this.seenHandshake = true;
    }
    this.pending = this.pending.subarray(offset);
    return packets;
  }

  /** The bytes of a packet begun and not completed yet. */
  get pendingBytes(): Buffer {
    return this.pending;
  }
}

export function requestHeader(packet: Buffer): { xid: number; type: number } | null {
  if (packet.length < 8) return null;
  return { xid: packet.readInt32BE(0), type: packet.readInt32BE(4) };
}

export function replyXid(packet: Buffer): number | null {
  return packet.length < 4 ? null : packet.readInt32BE(0);
}
