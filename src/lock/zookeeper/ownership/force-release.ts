import { parseNodeData } from '../../lock-node-data.js';
import { isZkCode } from '../../../zookeeper-client/zk-errors.js';
import { privateLockPath } from '../znode-names.js';
import type { ForcedReleaseEpoch } from './forced-release-epoch.js';
import type { LockZk, ZkOp } from '../session/lock-zk.js';

export interface ForcedRelease {
  /** Guid of the acquisition that held it (null: a client of the original algorithm). */
  readonly guid: string | null;
  readonly data: ReturnType<typeof parseNodeData>;
}

/** Positions in the forced-release transaction. */
const EPOCH_OP = 0;
const ENTRY_OP = 3;

/**
 * An operator takes a lock from its holder in one transaction: [setData(epoch) and setData(doc)
 * — bump the forced-release epoch and the document node's version, so the holder's own
 * compare-and-delete release deletes nothing, even after the emptied document node was reaped
 * and re-created —, delete(privateLock, its version), delete(the holder's entry)]. The document's
 * setData is conditional on the version read right before privateLock (owner-token.ts): a proxy's
 * grant in between moved it, the transaction is refused and the holder read again, so the
 * forced release takes the holder it read. Resolves null when nothing was held. The holder learns
 * it from its process's epoch watch (forced-release-epoch.ts), or at the latest when its release
 * is refused.
 */
export async function forceRelease(zk: LockZk, docPath: string, note: string, epoch: ForcedReleaseEpoch): Promise<ForcedRelease | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    // The document first: one session answers in order, so its version is the one the holder read below was granted at.
    const [doc, lock] = await Promise.allSettled([zk.get(docPath), zk.get(privateLockPath(docPath))]);
    if (lock.status === 'rejected') {
      if (isZkCode(lock.reason, 'NONODE')) return null;
      throw lock.reason;
    }
    if (doc.status === 'rejected') throw doc.reason;
    const node = lock.value;
    const data = parseNodeData(node.data);
    const ops: ZkOp[] = [
      { type: 'setData', path: epoch.path, data: note, version: -1 },
      { type: 'setData', path: docPath, data: note, version: doc.value.stat.version },
      { type: 'delete', path: privateLockPath(docPath), version: node.stat.version },
    ];
    if (data.entry !== null) ops.push({ type: 'delete', path: `${docPath}/${data.entry}`, version: -1 });
    const outcome = await zk.multi(ops);
    if (outcome.ok) return { guid: data.guid, data };
    // No epoch node yet (an older deployment, or removed by hand): create it and try again.
    if (outcome.failedIndex === EPOCH_OP) await epoch.read(zk);
    // privateLock changed hands meanwhile (the document's version or privateLock's delete refused), or the holder's entry is already gone: look again.
    if (outcome.failedIndex === ENTRY_OP) {
      const withoutEntry = await zk.multi(ops.slice(0, ENTRY_OP));
      if (withoutEntry.ok) return { guid: data.guid, data };
    }
  }
  return null;
}
