import { parseNodeData } from '../lock-node-data.js';
import { isZkCode } from '../zk-errors.js';
import { PRIVATE_LOCK } from '../znode-names.js';
import type { LockZk, TxnOp } from './lock-zk.js';

export interface ForcedRelease {
  /** Guid of the acquisition that held it (null: a client of the original algorithm). */
  readonly guid: string | null;
  readonly data: ReturnType<typeof parseNodeData>;
}

/**
 * An operator takes a lock from its holder in one transaction: [setData(doc) — bumps the
 * document node's version, so the holder's own compare-and-delete release will delete nothing —,
 * delete(privateLock, its version), delete(the holder's entry)]. Resolves null when nothing was
 * held. The holder learns it from its privateLock watch, or at the latest when its release is
 * refused.
 */
export async function forceRelease(zk: LockZk, docPath: string, note: string): Promise<ForcedRelease | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    let node;
    try {
      node = await zk.get(`${docPath}/${PRIVATE_LOCK}`);
    } catch (error) {
      if (isZkCode(error, 'NONODE')) return null;
      throw error;
    }
    const data = parseNodeData(node.data);
    const ops: TxnOp[] = [
      { op: 'setData', path: docPath, data: note, version: -1 },
      { op: 'delete', path: `${docPath}/${PRIVATE_LOCK}`, version: node.stat.version },
    ];
    if (data.entry !== null) ops.push({ op: 'delete', path: `${docPath}/${data.entry}`, version: -1 });
    const outcome = await zk.multi(ops);
    if (outcome.ok) return { guid: data.guid, data };
    // privateLock changed hands meanwhile, or the holder's entry is already gone: look again.
    if (outcome.failedIndex === 2) {
      const withoutEntry = await zk.multi(ops.slice(0, 2));
      if (withoutEntry.ok) return { guid: data.guid, data };
    }
  }
  return null;
}
