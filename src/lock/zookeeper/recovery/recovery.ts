import { parseNodeData } from '../../lock-node-data.js';
import { parseEntryName } from '../../queue-order.js';
import { isZkCode } from '../../../zookeeper-client/zk-errors.js';
import { PRIVATE_LOCK } from '../znode-names.js';
import type { LockZk } from '../session/lock-zk.js';
import { classifyFailure, type Failure } from '../session/round-trip.js';

/**
 * After a connection loss within the session, what our lost requests did: instead of replaying
 * them, read what ZooKeeper holds and recognise our nodes by owner session AND identity — the
 * czxid of a privateLock whose create we saw answered, else the cohort's guid in the node's data
 * (Curator's protected-node idea; CURATOR-45/79). A node of another session or acquisition is
 * never touched.
 */
export interface Reconciled {
  readonly kind: 'reconciled';
  readonly children: readonly string[];
  readonly docVersion: number;
  /** Our privateLock, or null. */
  readonly privateLock: { readonly czxid: number } | null;
  /** Our queue entry, or null. */
  readonly entry: string | null;
  /** Our entry's czxid (0 with no entry). */
  readonly entryCzxid: number;
  /** The document node's czxid at the read (queue-wait.ts `QueueRead`). */
  readonly docCzxid: number;
}

export type ReconcileResult = Reconciled | { readonly kind: 'noDocument' } | Failure;

const FIRST_RECONCILE_PAUSE_MS = 100;
const MAX_RECONCILE_PAUSE_MS = 5_000;
/** Reconciliations in a row that could not tell anything before the lock says so in the log. */
export const RECONCILE_UNKNOWN_WARN_AFTER = 4;

/**
 * Pause before a reconciliation after `unknownInARow` that did not tell anything: 0.1 s after a
 * lost reply, doubling up to 5 s while the reads keep failing that way (a server whose answers
 * this client cannot read, MARSHALLINGERROR every time). Never given up: a privateLock of ours
 * may be among what cannot be read. A session state change ends a pause early.
 */
export function reconcilePauseMs(unknownInARow: number): number {
  return Math.min(FIRST_RECONCILE_PAUSE_MS * 2 ** unknownInARow, MAX_RECONCILE_PAUSE_MS);
}

export interface Identity {
  readonly guid: string;
  /** czxid of the privateLock this cohort created, when the create was answered. */
  readonly czxid: number | null;
}

export async function reconcile(zk: LockZk, docPath: string, identity: Identity): Promise<ReconcileResult> {
  let read;
  try {
    read = await zk.children(docPath);
  } catch (error) {
    return isZkCode(error, 'NONODE') ? { kind: 'noDocument' } : classifyFailure(error);
  }
  const candidates = read.children.filter((child) => child === PRIVATE_LOCK || parseEntryName(child) !== null);
  const nodes = await Promise.allSettled(candidates.map((child) => zk.get(`${docPath}/${child}`)));
  let privateLock: { czxid: number } | null = null;
  let entry: string | null = null;
  let entryCzxid = 0;
  for (const [i, node] of nodes.entries()) {
    const name = candidates[i]!;
    if (node.status === 'rejected') {
      if (isZkCode(node.reason, 'NONODE')) continue;
      return classifyFailure(node.reason);
    }
    const { stat, data } = node.value;
    if (stat.ephemeralOwner !== zk.sessionId) continue;
    const ours = name === PRIVATE_LOCK && identity.czxid !== null ? stat.czxid === identity.czxid : parseNodeData(data).guid === identity.guid;
    if (!ours) continue;
    if (name === PRIVATE_LOCK) privateLock = { czxid: stat.czxid };
    else {
      entry = name;
      entryCzxid = stat.czxid;
    }
  }
  return { kind: 'reconciled', children: read.children, docVersion: read.stat.version, privateLock, entry, entryCzxid, docCzxid: read.stat.czxid };
}
