import type { NodeMode, ZkStat } from './zk-node-types.js';
import { ZK_RC, ZkError, type ZkErrorCode } from './zk-errors.js';

/**
 * ZooKeeper transactions (`multi`): the ops, their results, and the error that names the op that
 * made a transaction fail. ZooKeeper applies all ops or none; when one fails, its result carries
 * its error, the ops before it OK and the ops after it RUNTIMEINCONSISTENCY.
 */
/** `open`: anyone (world:anyone, all permissions); `creator`: the identities authenticated on this session. */
export type NodeAcl = 'open' | 'creator';

export type ZkOp =
  | {
      readonly type: 'create';
      readonly path: string;
      readonly data?: string | Buffer;
      readonly mode: NodeMode;
      readonly acl?: NodeAcl;
    }
  /** `version` -1 (default): whatever version is there. */
  | { readonly type: 'delete'; readonly path: string; readonly version?: number }
  | { readonly type: 'setData'; readonly path: string; readonly data: string | Buffer; readonly version?: number }
  /** Fails the transaction unless the node exists with exactly this data version. */
  | { readonly type: 'check'; readonly path: string; readonly version: number };

export interface ZkOpResult {
  readonly type: ZkOp['type'];
  readonly rc: number;
  /** 'OK' for an op that succeeded (or would have, had the transaction not failed). */
  readonly code: ZkErrorCode;
  /** create: the created path (with the sequence number of a sequential node). */
  readonly path?: string;
  /** create and setData of a committed transaction. */
  readonly stat?: ZkStat;
}

/**
 * A transaction the server refused because of one of its ops; nothing of it was applied.
 * `rc`/`code` are that op's ZooKeeper error (e.g. NODEEXISTS, BADVERSION, NONODE), so the usual
 * `isZkCode(error, 'NODEEXISTS')` checks work on it.
 */
export class ZkMultiError extends ZkError {
  /** Index in the ops array of the op that failed. */
  readonly failedIndex: number;
  readonly failedOp: ZkOp;
  /** One per op, in order. */
  readonly results: readonly ZkOpResult[];

  constructor(failedIndex: number, ops: readonly ZkOp[], results: readonly ZkOpResult[]) {
    const failed = results[failedIndex];
    const op = ops[failedIndex];
    if (failed === undefined || op === undefined) throw new RangeError(`no op ${failedIndex} in a transaction of ${ops.length}`);
    super(failed.rc, `multi failed at op ${failedIndex} of ${ops.length} (${op.type} ${op.path}): ${failed.code}`);
    this.name = 'ZkMultiError';
    this.failedIndex = failedIndex;
    this.failedOp = op;
    this.results = results;
  }
}

/** The index of the op that failed a transaction: the first result with an error of its own. */
export function failedOpIndex(results: readonly ZkOpResult[]): number {
  return results.findIndex((result) => result.rc !== ZK_RC.OK && result.rc !== ZK_RC.RUNTIMEINCONSISTENCY);
}
