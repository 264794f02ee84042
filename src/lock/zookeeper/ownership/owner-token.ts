import type { TxnOpResult, ZkOp } from '../session/lock-zk.js';

/**
 * The owner check. ZooKeeper's conditional operations compare a node's data version and nothing
 * else, and every holder's privateLock has the same name and data version (0): a delete of it by
 * version cannot tell our node from the next holder's. The document node's data version can, once
 * every grant moves it: the transaction that creates privateLock also sets the document node's
 * (empty) data, and the data version that leaves is the grant's token. A release, yield or step-back
 * deletes privateLock in one transaction with `check(document, token)`: after anybody else's grant
 * or a forced release (which bumps it too) the check fails and the transaction deletes nothing.
 */
export function bumpDocument(docPath: string): ZkOp {
  return { type: 'setData', path: docPath, data: '', version: -1 };
}

/** [create privateLock, bump the document's version]: a grant's own transaction. */
export function takeOps(docPath: string, privatePath: string, data: string): ZkOp[] {
  return [{ type: 'create', path: privatePath, data, mode: 'ephemeral' }, bumpDocument(docPath)];
}

/** The grant's token: the document's data version its `bumpDocument` left (ZooKeeper returns the Stat of a setData in a multi). */
export function tokenOf(result: TxnOpResult | undefined): number {
  const version = result?.stat?.version;
  // A check against -1 would pass for any version: without the Stat the owner check cannot be made.
  if (version === undefined) throw new Error('the transaction that took privateLock came back without the document node\'s Stat');
  return version;
}
