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
 * and re-created —, delete(privateLock, its version), delete(the holder's entry)]. Resolves null
 * when nothing was held. The holder learns it from its process's epoch watch
 * (forced-release-epoch.ts), or at the latest when its release is refused.
 */
export async function forceRelease(zk: LockZk, docPath: string, note: string, epoch: ForcedReleaseEpoch): Promise<ForcedRelease | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    let node;
    try {
      node = await zk.get(privateLockPath(docPath));
    } catch (error) {
      if (isZkCode(error, 'NONODE')) return null;
      throw error;
    }
    const data = parseNodeData(node.data);
    const ops: ZkOp[] = [
      { type: 'setData', path: epoch.path, data: note, version: -1 },
      { type: 'setData', path: docPath, data: note, version: -1 },
      { type: 'delete', path: privateLockPath(docPath), version: node.stat.version },
    ];
    if (data.entry !== null) ops.push({ type: 'delete', path: `${docPath}/${data.entry}`, version: -1 });
    const outcome = await zk.multi(ops);
    if (outcome.ok) return { guid: data.guid, data };
    // No epoch node yet (an older deployment, or removed by hand): create it and try again.
    if (outcome.failedIndex === EPOCH_OP) await epoch.read(zk);
    // privateLock changed hands meanwhile, or the holder's entry is already gone: look again.
    if (outcome.failedIndex === ENTRY_OP) {
      const withoutEntry = await zk.multi(ops.slice(0, ENTRY_OP));
      if (withoutEntry.ok) return { guid: data.guid, data };
    }
  }
  return null;
}
