import type { NodeMode, WatchEventType } from '../../../zookeeper-client/zk-client.js';
import type { ZkErrorCode } from '../../../zookeeper-client/zk-errors.js';
import type { ZkOp } from '../../../zookeeper-client/zk-multi.js';

/**
 * What the lock engine asks of one ZooKeeper session, in its own terms. One implementation
 * (`gated-zk.ts`) maps it onto the binding's `ZkClient`, bounds the requests outstanding on the
 * session and puts the configured ACL on every node created; the rest of the engine never sees
 * the binding. Every method rejects with a `ZkError`; `multi` resolves for a transaction that
 * ZooKeeper refused (with the failing operation), and rejects only when its outcome is unknown
 * (connection loss) or the session is gone.
 */
export interface NodeStat {
  /** Zxid of the transaction that created the node: the fencing token of a `privateLock`. */
  readonly czxid: number;
  /** Zxid of the latest change of the node's data (the forced-release epoch's: the latest forced release). */
  readonly mzxid: number;
  /** Data version (bumped by setData: a forced release bumps the document node's). */
  readonly version: number;
  readonly ctime: number;
  /** Hex session id of an ephemeral node's owner, "0" otherwise. */
  readonly ephemeralOwner: string;
}

export interface NodeRead {
  readonly stat: NodeStat;
  readonly data: Buffer;
}

export interface ChildrenRead {
  readonly children: readonly string[];
  /** The parent's stat: `version` is the document node's data version. */
  readonly stat: NodeStat;
}

/** A transaction's operations are the client's own (`ZkOp`): one vocabulary from the engine to the addon. */
export type { ZkOp };

export interface TxnOpResult {
  /** Created path (sequential names filled in); undefined for other operations. */
  readonly path?: string;
  /** Stat of a created or changed node, when the binding reports it. */
  readonly stat?: NodeStat;
}

export type TxnOutcome =
  | { readonly ok: true; readonly results: readonly TxnOpResult[] }
  | { readonly ok: false; readonly failedIndex: number; readonly code: ZkErrorCode };

export interface LockZk {
  /** Hex session id, as in `NodeStat.ephemeralOwner`. */
  readonly sessionId: string;
  /** create2: the new node's stat comes with the answer. */
  create(path: string, data: string, mode: NodeMode): Promise<{ readonly path: string; readonly stat: NodeStat }>;
  /** getChildren2. */
  children(path: string): Promise<ChildrenRead>;
  /** getChildren with a one-shot child watch. */
  childrenWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<readonly string[]>;
  get(path: string): Promise<NodeRead>;
  /** getData with a one-shot watch; `onEvent` sees node events only. */
  getWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<NodeRead>;
  /**
   * exists with a one-shot watch: the Stat without the data; null when there is no such node, and
   * the watch then waits for its creation (`onEvent('created')`). `onEvent` sees node events only.
   */
  existsWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<NodeStat | null>;
  delete(path: string, version: number): Promise<void>;
  /** Paths of this session's ephemeral nodes under the path prefix (getEphemerals, ZooKeeper 3.6+). */
  ephemerals(prefix: string): Promise<readonly string[]>;
  multi(ops: readonly ZkOp[]): Promise<TxnOutcome>;
}
