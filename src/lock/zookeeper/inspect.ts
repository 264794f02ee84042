import type { LockHolderInfo, LockKey, LockOwner, LockWaiterInfo } from '../lock-engine.js';
import { type LockNodeData, parseNodeData } from '../lock-node-data.js';
import { type PrefixRanks, priorityOfPrefix, queueFromChildren } from '../queue-order.js';
import { isZkCode } from '../../zookeeper-client/zk-errors.js';
import { decodeSegment, documentPath, indexPath, privateLockPath } from './znode-names.js';
import type { LockZk, NodeRead } from './session/lock-zk.js';

const UNKNOWN_OWNER: LockOwner = { host: 'unknown', pid: 0, requestId: '' };

async function readOrNull(zk: LockZk, path: string): Promise<NodeRead | null> {
  try {
    return await zk.get(path);
  } catch (error) {
    if (isZkCode(error, 'NONODE')) return null;
    throw error;
  }
}

async function childrenOrEmpty(zk: LockZk, path: string): Promise<readonly string[]> {
  try {
    return (await zk.children(path)).children;
  } catch (error) {
    if (isZkCode(error, 'NONODE')) return [];
    throw error;
  }
}

/** A document's lock as ZooKeeper shows it, with the node data an overlay of local state needs. */
export interface ZkInspection {
  readonly key: LockKey;
  readonly holder: LockHolderInfo | null;
  readonly queue: readonly (LockWaiterInfo & { readonly entryGuid: string | null })[];
  readonly holderData: LockNodeData | null;
}

/** Holder and waiters of one key, read in one pipelined round trip (plus one for entry data). */
export async function inspectKey(zk: LockZk, root: string, prefixes: PrefixRanks, key: LockKey): Promise<ZkInspection> {
  const docPath = documentPath(root, key);
  const [children, lock] = await Promise.all([childrenOrEmpty(zk, docPath), readOrNull(zk, privateLockPath(docPath))]);
  const queue = queueFromChildren(children, prefixes);
  const entries = await Promise.all(queue.map((entry) => readOrNull(zk, `${docPath}/${entry.name}`)));
  let holder: LockHolderInfo | null = null;
  let holderEntry: string | null = null;
  const holderData = lock === null ? null : parseNodeData(lock.data);
  if (lock !== null && holderData !== null) {
    // A client of the original algorithm writes no data: its entry is the head of the queue.
    holderEntry = holderData.guid === null ? (queue[0]?.name ?? null) : holderData.entry;
    const headPriority = queue[0] === undefined ? 'foreground' : priorityOfPrefix(queue[0].prefix, prefixes);
    holder = {
      owner: holderData.owner ?? UNKNOWN_OWNER,
      priority: holderData.priority ?? headPriority,
      since: holderData.acquiredAt ?? lock.stat.ctime,
      message: holderData.message,
    };
  }
  const waiters: (LockWaiterInfo & { entryGuid: string | null })[] = [];
  queue.forEach((entry, i) => {
    const node = entries[i];
    if (entry.name === holderEntry || node === null || node === undefined) return;
    const { owner, guid } = parseNodeData(node.data);
    waiters.push({ priority: priorityOfPrefix(entry.prefix, prefixes), entry: entry.name, entryGuid: guid, ...(owner === null ? {} : { owner }) });
  });
  return { key, holder, queue: waiters, holderData };
}

const LIST_CHUNK = 500;

/** Document ids of `index` whose privateLock exists, at most `limit`, scanning in chunks. */
export async function heldKeys(zk: LockZk, root: string, index: string, limit: number): Promise<LockKey[]> {
  const base = indexPath(root, index);
  const docs = [...(await childrenOrEmpty(zk, base))].sort();
  const found: LockKey[] = [];
  for (let start = 0; start < docs.length && found.length < limit; start += LIST_CHUNK) {
    const chunk = docs.slice(start, start + LIST_CHUNK);
    const locks = await Promise.all(chunk.map((doc) => readOrNull(zk, privateLockPath(`${base}/${doc}`))));
    chunk.forEach((doc, i) => {
      if (found.length < limit && locks[i] !== null) found.push({ index, id: decodeSegment(doc) });
    });
  }
  return found;
}
