import type { LockHolderInfo, LockInspection, LockKey, LockOwner, LockWaiterInfo } from './lock-engine.js';
import { parseNodeData } from './lock-node-data.js';
import { type PrefixRanks, priorityOfPrefix, queueFromChildren } from './queue-order.js';
import { type ZkClient, childrenOrEmpty } from './zk-client.js';
import { isZkCode } from './zk-errors.js';
import { PRIVATE_LOCK, decodeSegment, documentPath, indexPath } from './znode-names.js';

const UNKNOWN_OWNER: LockOwner = { host: 'unknown', pid: 0, requestId: '' };

async function dataOrNull(client: ZkClient, path: string): Promise<{ data: Buffer; ctime: number } | null> {
  try {
    const node = await client.get(path);
    return { data: node.data, ctime: node.stat.ctime };
  } catch (error) {
    if (isZkCode(error, 'NONODE')) return null;
    throw error;
  }
}

/** Holder and waiters of one key, read in one pipelined round trip (plus one for entry data). */
export async function inspectKey(client: ZkClient, root: string, prefixes: PrefixRanks, key: LockKey): Promise<LockInspection> {
  const docPath = documentPath(root, key);
  const [children, lock] = await Promise.all([childrenOrEmpty(client, docPath), dataOrNull(client, `${docPath}/${PRIVATE_LOCK}`)]);
  const queue = queueFromChildren(children, prefixes);
  const entries = await Promise.all(queue.map((entry) => dataOrNull(client, `${docPath}/${entry.name}`)));
  let holder: LockHolderInfo | null = null;
  let holderEntry: string | null = null;
  if (lock !== null) {
    const data = parseNodeData(lock.data);
    // A client of the original algorithm writes no data: its entry is the head of the queue.
    holderEntry = data.guid === null ? (queue[0]?.name ?? null) : data.entry;
    const headPriority = queue[0] === undefined ? 'foreground' : priorityOfPrefix(queue[0].prefix, prefixes);
    holder = {
      owner: data.owner ?? UNKNOWN_OWNER,
      priority: data.priority ?? headPriority,
      since: data.acquiredAt ?? lock.ctime,
      message: data.message,
    };
  }
  const waiters: LockWaiterInfo[] = [];
  queue.forEach((entry, i) => {
    const node = entries[i];
    if (entry.name === holderEntry || node === null || node === undefined) return;
    const owner = parseNodeData(node.data).owner;
    waiters.push({ priority: priorityOfPrefix(entry.prefix, prefixes), entry: entry.name, ...(owner === null ? {} : { owner }) });
  });
  return { key, holder, queue: waiters };
}

const LIST_CHUNK = 500;

/** Keys of `index` with a holder, at most `limit`, scanning document nodes in chunks. */
export async function listHeldKeys(
  client: ZkClient,
  root: string,
  prefixes: PrefixRanks,
  index: string,
  limit: number,
): Promise<LockInspection[]> {
  const docs = (await childrenOrEmpty(client, indexPath(root, index))).sort();
  const found: LockInspection[] = [];
  for (let start = 0; start < docs.length && found.length < limit; start += LIST_CHUNK) {
    const chunk = docs.slice(start, start + LIST_CHUNK);
    const base = indexPath(root, index);
    const locks = await Promise.all(chunk.map((doc) => dataOrNull(client, `${base}/${doc}/${PRIVATE_LOCK}`)));
    for (const [i, doc] of chunk.entries()) {
      if (found.length >= limit) break;
      if (locks[i] === null || locks[i] === undefined) continue;
      const inspection = await inspectKey(client, root, prefixes, { index, id: decodeSegment(doc) });
      if (inspection.holder !== null) found.push(inspection);
    }
  }
  return found;
}
