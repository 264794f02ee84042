import type { Reconciled } from './recovery.js';
import type { HolderWatch } from './holder-watch.js';
import type { OwnedLock } from './release-item.js';



/**
 * What of ours ZooKeeper holds under one document, as far as this process knows: our queue entry,
 * our privateLock (its czxid is the fencing token; the epoch known at its create guards its
 * release), and whether a request that makes either may have been applied unseen. Every step of
 * the document lock reads and writes it; a release is built from it.
 */
export class CohortNodes {
  entry: string | null = null;
  entryRank = Number.POSITIVE_INFINITY;
  ownsPrivateLock = false;
  /** czxid of our privateLock; null when we own none or its create was not answered. */
  ownedCzxid: number | null = null;
  docVersion = 0;
  /** The forced-release epoch known before our latest privateLock create was issued. */
  epochAtCreate = 0;
  /** The transaction that granted our privateLock created the document container (see `deletesDocument`). */
  createdDocument = false;
  privateLockGone = false;
  /** A create (or transaction) of ours may have been applied without us seeing the answer. */
  uncertain = false;
  children: readonly string[] = [];

  /**
   * A privateLock of ours. The document node goes with its release only when the transaction that
   * created the node granted it (`grantedInBatch` says so right after): taken any other way — after
   * a yield to another process, or again after recovering — the node may be somebody else's now.
   */
  owns(czxid: number, docVersion: number): void {
    this.ownsPrivateLock = true;
    // A new privateLock: a forced release seen before was of an earlier one.
    this.privateLockGone = false;
    this.ownedCzxid = czxid;
    this.docVersion = docVersion;
    this.createdDocument = false;
  }

  /** privateLock is not ours any more (given back, or found gone). */
  disown(): void {
    this.ownsPrivateLock = false;
    this.ownedCzxid = null;
  }

  /** The document was gone: nothing of ours is there, and nothing is uncertain. */
  forgetAll(): void {
    this.entry = null;
    this.disown();
    this.uncertain = false;
  }

  observed(children: readonly string[], docVersion: number): void {
    this.children = children;
    this.docVersion = docVersion;
  }

  /** What a reconciliation found is ours from now on; nothing is uncertain any more. */
  adopt(result: Reconciled, entryRank: number): void {
    this.entry = result.entry;
    this.entryRank = entryRank;
    this.ownsPrivateLock = result.privateLock !== null;
    this.ownedCzxid = result.privateLock?.czxid ?? null;
    // Which create made it is not known: 0 is below any epoch (a release then verifies first).
    this.epochAtCreate = 0;
    this.uncertain = false;
    this.observed(result.children, result.docVersion);
  }

  /** Our privateLock as a release deletes it; `watch` (when it watches this one) tells whether it went. */
  ownedLock(watch: HolderWatch | null): OwnedLock | null {
    if (!this.ownsPrivateLock || this.ownedCzxid === null) return null;
    const own = watch?.czxid === this.ownedCzxid ? watch : null;
    return { czxid: this.ownedCzxid, docVersion: this.docVersion, epoch: this.epochAtCreate, ...(own === null ? {} : { gone: () => own.gone() }) };
  }

  /**
   * Our privateLock as its release deletes it after a hold: without a watch of its own (a bulk's
   * keys), looked for among our session's nodes first — it may have been deleted by hand and the
   * name taken by the next holder meanwhile.
   */
  heldLock(watch: HolderWatch | null): OwnedLock | null {
    if (!this.ownsPrivateLock || this.ownedCzxid === null) return null;
    if (watch?.czxid === this.ownedCzxid) return this.ownedLock(watch);
    // Built at once (a bulk releases hundreds of these in one turn), not as a copy of ownedLock's.
    return { czxid: this.ownedCzxid, docVersion: this.docVersion, epoch: this.epochAtCreate, verifyFirst: true };
  }
}
