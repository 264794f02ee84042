import type { Reconciled } from './recovery/recovery.js';
import type { HolderWatch } from './ownership/holder-watch.js';
import type { OwnedLock } from './ownership/release-item.js';

/**
 * What of ours ZooKeeper holds under one document, as far as this process knows: our queue entry,
 * our privateLock (its czxid is the fencing token; the epoch known at its create guards its
 * release), and whether a request that makes either may have been applied unseen. The parts of
 * the document lock read it; only the methods below change it, each named for the news it
 * records, and a release is built from it.
 */
export class CohortNodes {
  private entryName: string | null = null;
  /** czxid of our entry; 0 when the create's answer did not say. */
  private entryCzxid = 0;
  private rankOfEntry = Number.POSITIVE_INFINITY;
  private owned = false;
  private czxid: number | null = null;
  private grantToken = 0;
  private epoch = 0;
  private created = false;
  private gone = false;
  private unsure = false;
  private lastChildren: readonly string[] = [];

  /** Our queue entry's name; null when we have none. */
  get entry(): string | null {
    return this.entryName;
  }

  /** The rank our entry was made at (Infinity: no entry). */
  get entryRank(): number {
    return this.rankOfEntry;
  }

  get ownsPrivateLock(): boolean {
    return this.owned;
  }

  /** czxid of our privateLock; null when we own none or its create was not answered. */
  get ownedCzxid(): number | null {
    return this.czxid;
  }

  /** The document's data version our grant left (owner-token.ts): a release, yield and step-back check it. */
  get token(): number {
    return this.grantToken;
  }

  /** The forced-release epoch known before our latest privateLock create was issued. */
  get epochAtCreate(): number {
    return this.epoch;
  }

  /** The transaction that granted our privateLock created the document container (see `deletesDocument`). */
  get createdDocument(): boolean {
    return this.created;
  }

  /** Our privateLock was seen gone while we owned it (forced release, deleted by hand): a release leaves it be. */
  get privateLockGone(): boolean {
    return this.gone;
  }

  /** A create (or transaction) of ours may have been applied without us seeing the answer. */
  get uncertain(): boolean {
    return this.unsure;
  }

  /** The document's children as last read. */
  get children(): readonly string[] {
    return this.lastChildren;
  }

  /** Our entry is `entry`, made at `rank` (a create, a re-rank, a re-queue); `czxid` 0 when not known. */
  queued(entry: string, rank: number, czxid: number): void {
    this.entryName = entry;
    this.rankOfEntry = rank;
    this.entryCzxid = czxid;
  }

  /** Our entry is gone (the document reaped, deleted by hand, a refused re-rank). */
  leftQueue(): void {
    this.entryName = null;
  }

  /**
   * A privateLock of ours. The document node goes with its release only when the transaction that
   * created the node granted it (`createdDocument`, said by the batch): taken any other way —
   * after a yield to another process, or again after recovering — the node may be somebody else's now.
   */
  owns(czxid: number, token: number, createdDocument = false): void {
    this.owned = true;
    // A new privateLock: a forced release seen before was of an earlier one.
    this.gone = false;
    this.czxid = czxid;
    this.grantToken = token;
    this.created = createdDocument;
  }

  /** privateLock is not ours any more (given back, or found gone). */
  disown(): void {
    this.owned = false;
    this.czxid = null;
  }

  /** Our privateLock went (or may have) without our release: `gone` true, a release deletes nothing by its name. */
  privateLockWent(gone: boolean): void {
    this.gone = gone;
  }

  /** Right before a privateLock create is issued: the epoch known now. */
  creating(epoch: number): void {
    this.epoch = epoch;
  }

  /** A request of ours may have been applied unseen: look before going on. */
  outcomeUnknown(): void {
    this.unsure = true;
  }

  /** Nothing of ours can be found any more (the document or the session went, or looking failed for good). */
  outcomeSettled(): void {
    this.unsure = false;
  }

  /** The document was gone: nothing of ours is there, and nothing is uncertain. */
  forgetAll(): void {
    this.entryName = null;
    this.disown();
    this.unsure = false;
  }

  /**
   * The document's children as read now; the token stays the one our grant left (anybody's grant
   * or forced release since must refuse our release). `docCzxid` (0: not read with them): a
   * document node younger than our entry was created after it — reaped and made again, its
   * sequence counter started over — so our entry went with the old node, and a child of the same
   * name is somebody else's.
   */
  observed(children: readonly string[], docCzxid = 0): void {
    this.lastChildren = children;
    if (this.entryName !== null && this.entryCzxid > 0 && docCzxid > this.entryCzxid) this.entryName = null;
  }

  /** What a reconciliation found is ours from now on; nothing is uncertain any more. */
  adopt(result: Reconciled, entryRank: number): void {
    this.entryName = result.entry;
    this.entryCzxid = result.entryCzxid;
    this.rankOfEntry = entryRank;
    this.owned = result.privateLock !== null;
    this.czxid = result.privateLock?.czxid ?? null;
    // Which create made it is not known: 0 is below any epoch (a release then verifies first).
    this.epoch = 0;
    // Read before privateLock, which was ours at its read: nothing but our own grant moved it since.
    this.grantToken = result.docVersion;
    this.unsure = false;
    this.observed(result.children, result.docCzxid);
  }

  /** Our privateLock as a release deletes it; `watch` (when it watches this one) tells whether it went. */
  ownedLock(watch: HolderWatch | null): OwnedLock | null {
    if (!this.owned || this.czxid === null) return null;
    const own = watch?.czxid === this.czxid ? watch : null;
    return { czxid: this.czxid, token: this.grantToken, epoch: this.epoch, ...(own === null ? {} : { gone: () => own.gone(), unsure: () => own.unsure(), whenSure: () => own.whenSure() }) };
  }

  /**
   * Our privateLock as its release deletes it after a hold: without a watch of its own (a bulk's
   * keys), looked for among our session's nodes first — it may have been deleted by hand and the
   * name taken by the next holder meanwhile.
   */
  heldLock(watch: HolderWatch | null): OwnedLock | null {
    if (!this.owned || this.czxid === null) return null;
    if (watch?.czxid === this.czxid) return this.ownedLock(watch);
    // Built at once (a bulk releases hundreds of these in one turn), not as a copy of ownedLock's.
    return { czxid: this.czxid, token: this.grantToken, epoch: this.epoch, verifyFirst: true };
  }
}
