import { privateLockPath } from '../znode-names.js';
import type { ForcedReleaseEpoch } from './forced-release-epoch.js';
import type { ZkOp } from '../session/lock-zk.js';

/**
 * What one acquisition leaves behind and may delete: never a bare path, which could be another holder's node.
 * - `privateLock`: ours by its czxid; deleted together with `check(doc, token)` — the document's
 *   data version our grant left, which anybody else's grant or a forced release moves
 *   (owner-token.ts) — and a check of the forced-release epoch read before it was created
 *   (forced-release-epoch.ts), so after another holder's grant or an operator's forced release
 *   nothing is deleted, even when the emptied document node was reaped and re-created after the
 *   forced release.
 * - `entry`: our queue entry (sequential names are never reused within a container's life).
 * - `deleteDocument`: we created the document container in this acquisition; deleting it in the
 *   same transaction saves the server's reaper a transaction per document (refused, and retried
 *   without it, if anybody else has a node under it).
 */
export interface ReleaseItem {
  readonly docPath: string;
  readonly generation: number;
  readonly privateLock: OwnedLock | null;
  readonly entry: string | null;
  readonly deleteDocument: boolean;
}

export interface OwnedLock {
  readonly czxid: number;
  /** The document's data version our grant left (owner-token.ts). */
  readonly token: number;
  /** The forced-release epoch known before privateLock was created. */
  readonly epoch: number;
  /**
   * The holder's watch saw privateLock go (holder-watch.ts): the name may already be the next
   * holder's, and is never deleted. Absent where no watch was armed (a bulk's keys).
   */
  readonly gone?: () => boolean;
  /** The holder's watch is reading the node (holder-watch.ts): it vouches for nothing until the read answers. */
  readonly unsure?: () => boolean;
  /** Resolves once the holder's watch is sure again (holder-watch.ts). */
  readonly whenSure?: () => Promise<void>;
  /**
   * No watch vouches for it: the release first lists this session's nodes (one getEphemerals for
   * the whole transaction) and deletes privateLock only when it is among them.
   */
  readonly verifyFirst?: boolean;
}

/** A release waiting to be sent, and what to call once it is committed (or moot). */
export interface PendingRelease {
  item: ReleaseItem;
  /** Called once: the release is committed, or moot. */
  done(): void;
  /** Times its ownership was verified after a refused epoch check (bounded). */
  verified?: number;
  /** Times in a row its transaction was refused as a whole request (paces the next try). */
  refusedWhole?: number;
  /**
   * Its privateLock (`verifyFirst`) was among this session's nodes in a listing made after it was
   * submitted: it is not listed again when its transaction is retried.
   */
  listed?: boolean;
}

/** The release deletes a privateLock no watch vouches for and no listing has shown yet. */
export function awaitsListing(pending: PendingRelease): boolean {
  const lock = pending.item.privateLock;
  return lock !== null && (lock.verifyFirst === true || lock.unsure?.() === true) && pending.listed !== true;
}

/**
 * How soon a release is sent. `now` (somebody may wait for the document): as soon as the code
 * that released it has run, with the other releases made in that same run (a bulk's), not after
 * the event loop's next turn — another process waiting for it takes the lock only after this
 * transaction and its watch event, and that turn (the answers and requests of every other
 * connection) came on top of every hand-over between processes. `coalesced` (nobody else is
 * known to wait): with the other releases of this event-loop turn when none of this batcher's
 * transactions is on its way, else with the next one, sent when they are all answered. Under load
 * that makes one transaction of what would be several, which the server then does not put ahead
 * of the acquisitions sent meanwhile (alternating write-uncontended runs: 0.72–0.86x the bare proxy's throughput against 0.69–0.82x).
 */
export type ReleasePace = 'now' | 'coalesced';

/** Operations per transaction (ZooKeeper's request limit is 1 MiB by default; these are small). */
const MAX_OPS_PER_TXN = 3_000;

export type Role = 'check' | 'epoch' | 'lock' | 'entry' | 'document';

/**
 * The operations of release transactions, with the release and the role each stands for, in
 * parallel arrays: a bulk's release is hundreds of items, and a wrapper object per operation was a
 * measurable share of what the young generation collects per key.
 */
export class ReleaseTxn {
  readonly ops: ZkOp[] = [];
  readonly owners: PendingRelease[] = [];
  readonly roles: Role[] = [];
  /** Epochs already checked in this transaction: items checking the same one share its check. */
  private readonly epochsChecked = new Set<number>();

  /**
   * Appends one release's operations. Deleting the document node checks its version itself (and
   * that nobody else has a node under it), so it replaces the check.
   */
  add(pending: PendingRelease, epoch: ForcedReleaseEpoch): void {
    const { item } = pending;
    const { docPath, privateLock } = item;
    const withDocument = item.deleteDocument && privateLock !== null;
    if (privateLock !== null) {
      if (!withDocument) this.push(pending, { type: 'check', path: docPath, version: privateLock.token }, 'check');
      if (!this.epochsChecked.has(privateLock.epoch)) {
        this.epochsChecked.add(privateLock.epoch);
        this.push(pending, epoch.checkOp(privateLock.epoch), 'epoch');
      }
      this.push(pending, { type: 'delete', path: privateLockPath(docPath), version: 0 }, 'lock');
    }
    if (item.entry !== null) this.push(pending, { type: 'delete', path: `${docPath}/${item.entry}`, version: -1 }, 'entry');
    if (withDocument) this.push(pending, { type: 'delete', path: docPath, version: privateLock.token }, 'document');
  }

  private push(pending: PendingRelease, op: ZkOp, role: Role): void {
    this.ops.push(op);
    this.owners.push(pending);
    this.roles.push(role);
  }
}

/** Whoever learns that its release is through by a call rather than a promise. */
export interface ReleaseOwner {
  releaseCommitted(): void;
}

/** A pending release that tells its owner when it is through: one object per release, no promise. */
export class OwnedRelease implements PendingRelease {
  item: ReleaseItem;
  verified?: number;
  refusedWhole?: number;
  listed?: boolean;
  private readonly owner: ReleaseOwner;

  constructor(item: ReleaseItem, owner: ReleaseOwner) {
    this.item = item;
    this.owner = owner;
  }

  done(): void {
    this.owner.releaseCommitted();
  }
}

/** The operations of one release on its own, with what each stands for. */
export function opsOf(item: ReleaseItem, epoch: ForcedReleaseEpoch): { readonly op: ZkOp; readonly role: Role }[] {
  const txn = new ReleaseTxn();
  txn.add({ item, done: () => undefined }, epoch);
  return txn.ops.map((op, index) => ({ op, role: txn.roles[index]! }));
}

/**
 * How many operations `opsOf` gives for `item`, without building them (sizing a batch's chunks):
 * our privateLock takes three (the document's check or its delete, the epoch check, the delete).
 */
export function opCount(item: ReleaseItem): number {
  return (item.privateLock === null ? 0 : 3) + (item.entry === null ? 0 : 1);
}

/** The item without the part a refused transaction says is not ours (or not deletable) any more. */
export function withoutFailedPart(item: ReleaseItem, role: Role | undefined, code: string): ReleaseItem | null {
  let next: ReleaseItem;
  // The document is only busy (somebody else queued under it): keep everything else.
  if (role === 'document' && code === 'NOTEMPTY') next = { ...item, deleteDocument: false };
  else if (role === 'entry') next = { ...item, entry: null };
  // privateLock's delete, or the document's for another reason than its version (a refused
  // version goes to a verification first): privateLock is gone.
  else if (role !== undefined) next = { ...item, privateLock: null, deleteDocument: false };
  else return null;
  return next.privateLock === null && next.entry === null ? null : next;
}

/** `batch` in transactions of at most `MAX_OPS_PER_TXN` operations, in order. */
export function* chunks(batch: readonly PendingRelease[]): Generator<PendingRelease[]> {
  let chunk: PendingRelease[] = [];
  let ops = 0;
  for (const pending of batch) {
    const size = opCount(pending.item);
    if (ops + size > MAX_OPS_PER_TXN && chunk.length > 0) {
      yield chunk;
      chunk = [];
      ops = 0;
    }
    chunk.push(pending);
    ops += size;
  }
  if (chunk.length > 0) yield chunk;
}
