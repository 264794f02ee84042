import { isZkCode } from '../../../zookeeper-client/zk-errors.js';
import { privateLockPath } from '../znode-names.js';
import type { Link } from '../session/connection.js';
import type { ForcedReleaseEpoch } from './forced-release-epoch.js';
import type { ReleaseItem } from './release-item.js';

/**
 * What of `item` still exists and belongs to this acquisition (owner session, czxid), with the
 * epoch and the document's version read BEFORE privateLock (one session answers in order): if
 * privateLock is ours at that read, only a forced release — which bumps both — can take it from
 * us afterwards. A forced release before it took the holder before us (our privateLock is newer).
 */
export async function stillOurs(link: Link, item: ReleaseItem, epochs: ForcedReleaseEpoch, firstLook = true): Promise<ReleaseItem | null> {
  const { zk } = link;
  const [epoch, doc, lock, entry] = await Promise.allSettled([
    item.privateLock === null ? null : zk.get(epochs.path),
    item.privateLock === null ? null : zk.get(item.docPath),
    item.privateLock === null ? null : zk.get(privateLockPath(item.docPath)),
    item.entry === null ? null : zk.get(`${item.docPath}/${item.entry}`),
  ]);
  const lockOurs =
    lock.status === 'fulfilled' && lock.value !== null && lock.value.stat.ephemeralOwner === zk.sessionId && lock.value.stat.czxid === item.privateLock?.czxid;
  const entryOurs = entry.status === 'fulfilled' && entry.value !== null && entry.value.stat.ephemeralOwner === zk.sessionId;
  for (const read of [lock, entry]) if (read.status === 'rejected' && !isZkCode(read.reason, 'NONODE')) throw read.reason;
  if (!lockOurs && !entryOurs) return null;
  if (lockOurs && epoch.status === 'rejected') {
    // No epoch node (removed by hand?): create it and look again, so the epoch is read in order.
    if (!isZkCode(epoch.reason, 'NONODE') || !firstLook) throw epoch.reason;
    await epochs.read(zk);
    return stillOurs(link, item, epochs, false);
  }
  const epochNow = epoch.status === 'fulfilled' ? (epoch.value?.stat.version ?? 0) : 0;
  // privateLock ours at its read: its document node was there at the read before it.
  if (lockOurs && doc.status === 'rejected') throw doc.reason;
  // Read before privateLock, which was ours at its read: only our own grant moved it since (owner-token.ts).
  const token = doc.status === 'fulfilled' ? (doc.value?.stat.version ?? 0) : 0;
  const privateLock = lockOurs && item.privateLock !== null ? { ...item.privateLock, epoch: epochNow, token } : null;
  return { ...item, privateLock, entry: entryOurs ? item.entry : null, deleteDocument: lockOurs && item.deleteDocument };
}

/**
 * A prefix that one listing of the session's nodes (a string prefix, not a subtree) takes for the
 * releases of `docPaths`: the longest string that every `${docPath}/` starts with, or one character
 * less (a wider listing verifies the same). Found from the least and the greatest path in string
 * order alone — every path between them shares their common prefix — rather than by comparing each
 * path character by character.
 */
export function listingPrefix(docPaths: readonly string[]): string {
  let least = docPaths[0] ?? '';
  let greatest = least;
  for (const path of docPaths) {
    if (path < least) least = path;
    else if (path > greatest) greatest = path;
  }
  if (least === greatest) return `${least}/`;
  let same = 0;
  while (same < least.length && least.charCodeAt(same) === greatest.charCodeAt(same)) same++;
  return least.slice(0, same);
}
