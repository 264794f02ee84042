/** The node vocabulary shared by the ZooKeeper client and its transaction encoding. */

export type NodeMode = 'persistent' | 'persistentSequential' | 'container' | 'ephemeral' | 'ephemeralSequential';

export type WatchEventType = 'created' | 'deleted' | 'changed' | 'child';

/** The Stat of a znode. Zxids are 64-bit on the wire and exact as JS numbers below 2^53. */
export interface ZkStat {
  readonly czxid: number;
  readonly mzxid: number;
  readonly pzxid: number;
  readonly version: number;
  readonly cversion: number;
  readonly aversion: number;
  /** Epoch ms; 0 when unknown (a create's Stat derived from its transaction, see `multi`). */
  readonly ctime: number;
  readonly mtime: number;
  readonly dataLength: number;
  readonly numChildren: number;
  /** Hex session id of the owner of an ephemeral node, "0" otherwise. */
  readonly ephemeralOwner: string;
}
