import type { NodeMode, ZkStat } from './zk-node-types.js';
import type { NodeAcl, ZkOp, ZkOpResult } from './zk-multi.js';
import { type ZkErrorCode, zkCodeOf } from './zk-errors.js';

/**
 * A transaction in the addon's terms (native/node-zk.cpp AMulti): arrays, not an object per op
 * and per result. A bulk's transactions carry thousands of operations, and objects read and made
 * property by property through the V8 API were most of the client's CPU per operation.
 */
export interface NativeMultiRequest {
  /** Op codes (native/zk-multi.h): 1 create, 2 delete, 5 setData, 13 check. */
  readonly kinds: Int32Array;
  /** Three per op: create flags, version (-1: any), ACL mode. */
  readonly ints: Int32Array;
  readonly paths: string[];
  readonly data: (string | Buffer | undefined)[];
}

/** The addon's answer per op; `rcs` null when the request itself failed (no answer per op). */
export interface NativeMultiAnswer {
  readonly rcs: readonly number[] | null;
  /** The created path of each create; null when no op created one. */
  readonly paths: readonly (string | undefined)[] | null;
  /**
   * STAT_FIELDS numbers per op: 1 when the server sent a Stat (else all 0), then czxid, mzxid,
   * pzxid, version, cversion, aversion, ctime, mtime, dataLength, numChildren; null when no op has one.
   */
  readonly stats: Float64Array | null;
  /** The ephemeralOwner (hex) of each Stat that has one; null when none has. */
  readonly owners: readonly (string | undefined)[] | null;
}

const STAT_FIELDS = 11;
const OP_KINDS: Record<ZkOp['type'], number> = { create: 1, delete: 2, setData: 5, check: 13 };
export const ACL_MODES: Record<NodeAcl, number> = { open: 0, creator: 1 };

export function encodeMulti(ops: readonly ZkOp[], flags: Record<NodeMode, number>, defaultAcl: NodeAcl = 'open'): NativeMultiRequest {
  const count = ops.length;
  const kinds = new Int32Array(count);
  const ints = new Int32Array(3 * count);
  const paths = new Array<string>(count);
  const data = new Array<string | Buffer | undefined>(count);
  ops.forEach((op, i) => {
    kinds[i] = OP_KINDS[op.type];
    paths[i] = op.path;
    ints[3 * i + 1] = -1;
    switch (op.type) {
      case 'create':
        data[i] = op.data ?? '';
        ints[3 * i] = flags[op.mode];
        ints[3 * i + 2] = ACL_MODES[op.acl ?? defaultAcl];
        break;
      case 'setData':
        data[i] = op.data;
        ints[3 * i + 1] = op.version ?? -1;
        break;
      case 'delete':
        ints[3 * i + 1] = op.version ?? -1;
        break;
      case 'check':
        ints[3 * i + 1] = op.version;
        break;
    }
  });
  return { kinds, ints, paths, data };
}

/** What a create's Stat is when the server did not send one: derived from the transaction (see ZkClient.multi). */
export interface CreatedStatSource {
  readonly zxid: number;
  /** This session's id (hex), read once per transaction. */
  sessionId(): string;
}

/** The server answered each op (`rcs` set); narrows the answer without copying it. */
export function answeredPerOp(answer: NativeMultiAnswer): answer is NativeMultiAnswer & { readonly rcs: readonly number[] } {
  return answer.rcs !== null;
}

/**
 * One typed result per op of a transaction the server answered (`rc` 0 or the failing op's error).
 * A committed transaction's results read the answer when asked: a bulk's transaction has
 * thousands of ops and its caller reads one field of some of them (a privateLock's czxid), so
 * making a Stat object for every create showed in the proxy's CPU profile.
 */
export function decodeMulti(ops: readonly ZkOp[], answer: NativeMultiAnswer & { readonly rcs: readonly number[] }, rc: number, created: CreatedStatSource): ZkOpResult[] {
  if (rc === 0) {
    const txn: CommittedTxn = { ops, answer, created };
    return ops.map((_op, i) => new CommittedOp(txn, i));
  }
  return ops.map((op, i) => {
    const opRc = answer.rcs[i] ?? rc;
    return { type: op.type, rc: opRc, code: zkCodeOf(opRc) };
  });
}

/** What the results of one committed transaction share. */
interface CommittedTxn {
  readonly ops: readonly ZkOp[];
  readonly answer: NativeMultiAnswer;
  readonly created: CreatedStatSource;
}

/**
 * One op of a committed transaction; its path and Stat are read from the answer on access. Two
 * fields, the rest shared or on the prototype: one is made for each op of a bulk's transactions.
 */
class CommittedOp implements ZkOpResult {
  private readonly txn: CommittedTxn;
  private readonly index: number;

  constructor(txn: CommittedTxn, index: number) {
    this.txn = txn;
    this.index = index;
  }

  get rc(): number {
    return 0;
  }

  get code(): ZkErrorCode {
    return 'OK';
  }

  get type(): ZkOp['type'] {
    return this.op.type;
  }

  get path(): string | undefined {
    const { op } = this;
    return op.type === 'create' ? (this.txn.answer.paths?.[this.index] ?? op.path) : undefined;
  }

  get stat(): ZkStat | undefined {
    const { op, txn } = this;
    // The server always sends a setData's Stat.
    if (op.type === 'setData') return sentStat(txn.answer, this.index) ?? createdStat(op, { zxid: 0, sessionId: () => '0' });
    if (op.type !== 'create') return undefined;
    return sentStat(txn.answer, this.index) ?? createdStat(op, txn.created);
  }

  private get op(): ZkOp {
    return this.txn.ops[this.index]!;
  }
}

function sentStat(answer: NativeMultiAnswer, i: number): ZkStat | null {
  const { stats } = answer;
  const at = i * STAT_FIELDS;
  if (stats === null || stats[at] !== 1) return null;
  const field = (n: number): number => stats[at + n] ?? 0;
  return {
    czxid: field(1),
    mzxid: field(2),
    pzxid: field(3),
    version: field(4),
    cversion: field(5),
    aversion: field(6),
    ctime: field(7),
    mtime: field(8),
    dataLength: field(9),
    numChildren: field(10),
    ephemeralOwner: answer.owners?.[i] ?? '0',
  };
}

/** The Stat of a node the transaction created, from the transaction's zxid: exact except ctime/mtime (0). */
function createdStat(op: ZkOp, created: CreatedStatSource): ZkStat {
  const ephemeral = op.type === 'create' && (op.mode === 'ephemeral' || op.mode === 'ephemeralSequential');
  const data = op.type === 'create' || op.type === 'setData' ? op.data : undefined;
  return {
    czxid: created.zxid,
    mzxid: created.zxid,
    pzxid: created.zxid,
    version: 0,
    cversion: 0,
    aversion: 0,
    ctime: 0,
    mtime: 0,
    dataLength: Buffer.byteLength(data ?? ''),
    numChildren: 0,
    ephemeralOwner: ephemeral ? created.sessionId() : '0',
  };
}
