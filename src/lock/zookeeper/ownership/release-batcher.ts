import type { Logger } from 'pino';
import { withinMs } from '../../../zookeeper-client/within-ms.js';
import { isZkCode, toZkError } from '../../../zookeeper-client/zk-errors.js';
import { PRIVATE_LOCK_SUFFIX } from '../znode-names.js';
import type { Connection, Link } from '../session/connection.js';
import type { ForcedReleaseEpoch } from './forced-release-epoch.js';
import { type PendingRelease, type ReleaseItem, type ReleaseOwner, type ReleasePace, type Role, OwnedRelease, ReleaseTxn, awaitsListing, chunks, withoutFailedPart } from './release-item.js';
import { listingPrefix, stillOurs } from './release-verification.js';

type Pending = PendingRelease;

/** The documents of one flush whose releases wait for their listing, and when they are issued. */
interface Verification {
  readonly docPaths: ReadonlySet<string>;
  readonly issued: Promise<void>;
}

/**
 * How long a release waits for a holder watch's read on its way (holder-watch.ts) before it lists
 * the session's nodes instead: the read is usually answered within a round trip, but one stuck
 * behind a failing link would otherwise hold the release, and every later acquisition of the
 * document here, for as long as the link takes.
 */
const WATCH_READ_WAIT_MS = 1_000;

/** Verifications of one release in a row, each after a forced release somewhere, before giving up. */
const MAX_VERIFICATIONS = 5;

/**
 * A release whose transaction is refused as a whole request (THROTTLEDOP asks to retry later) is
 * tried again after n × this pause for its n-th refusal, at most `MAX_WHOLE_REFUSAL_PAUSE_MS`,
 * for as long as the session lives: given up, its privateLock stayed until the session ended and
 * every writer of the document, in every process, waited for it. After `WHOLE_REFUSALS_LOGGED`
 * refusals in a row it says so, once.
 */
const WHOLE_REFUSAL_BACKOFF_MS = 100;
const MAX_WHOLE_REFUSAL_PAUSE_MS = 2_000;
const WHOLE_REFUSALS_LOGGED = 5;

/**
 * A batch refused by one document's NOTEMPTY goes again without that delete this many times; the
 * next refusal keeps every document of the batch. Each round is a round trip of the whole batch,
 * its locks held meanwhile, and one proxy's requests queuing under documents the batch deletes
 * could otherwise make one round each.
 */
const MAX_DOCUMENT_REFUSALS = 2;

/**
 * Releases as compare-and-delete transactions. Items submitted in the same turn of the event
 * loop go out as one `multi` (a bulk's 1,000 releases are one transaction), `coalesced` ones with
 * the next transaction after those on their way (ReleasePace); a refused batch falls
 * back to one transaction per item. A release is guaranteed across connection losses: after a
 * reconnect within the session the item is reconciled against what ZooKeeper holds (owner
 * session and czxid), never replayed blindly; a session that ended took the nodes with it.
 */
export class ReleaseBatcher {
  private readonly connection: Connection;
  private readonly epoch: ForcedReleaseEpoch;
  private readonly logger: Logger;
  private pending: Pending[] = [];
  private readonly pendingDocs = new Set<string>();
  private scheduled: NodeJS.Immediate | null = null;
  /** A flush is queued as a microtask (`now` releases). */
  private flushQueued = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** This batcher's transactions sent and not answered yet (`coalesced` releases wait for them). */
  private txnsOnTheirWay = 0;
  /**
   * Releases waiting for the listing that verifies them: one entry per flush (its documents, and
   * when its transactions are issued), so that a bulk's hundreds of documents are not entered and
   * taken out one by one.
   */
  private readonly verifying = new Set<Verification>();
  /** The server cannot list a session's ephemeral nodes (before 3.6). */
  private ephemeralsUnsupported = false;

  private readonly documentKept: (docPath: string) => void;
  private readonly lockLost: (docPath: string, code: string) => void;

  /**
   * `documentKept`: a document a release was to delete stays (somebody has a node under it).
   * `lockLost`: a release found its privateLock no longer its own (the owner check or the delete
   * refused it): the lock was lost while held, unseen.
   */
  constructor(
    connection: Connection,
    epoch: ForcedReleaseEpoch,
    logger: Logger,
    hooks: { readonly documentKept: (docPath: string) => void; readonly lockLost: (docPath: string, code: string) => void },
  ) {
    this.connection = connection;
    this.epoch = epoch;
    this.logger = logger;
    this.documentKept = hooks.documentKept;
    this.lockLost = hooks.lockLost;
  }

  submit(item: ReleaseItem, pace: ReleasePace = 'now'): Promise<void> {
    if (item.privateLock === null && item.entry === null) return Promise.resolve();
    return new Promise((done) => this.enqueue({ item, done }, pace));
  }

  /** `submit` for an owner told by `releaseCommitted` (a bulk's keys: no promise each). */
  submitFor(owner: ReleaseOwner, item: ReleaseItem, pace: ReleasePace): void {
    if (item.privateLock === null && item.entry === null) owner.releaseCommitted();
    else this.enqueue(new OwnedRelease(item, owner), pace);
  }

  private enqueue(pending: Pending, pace: ReleasePace): void {
    this.pending.push(pending);
    this.pendingDocs.add(pending.item.docPath);
    if (pace === 'now') this.flushSoon();
    else if (this.txnsOnTheirWay === 0) this.scheduleFlush();
  }

  /**
   * Resolves once the releases of `docPaths` that wait for their verification (a bulk's keys) are
   * issued; null when none waits. A new acquisition or read of such a document waits for it, so
   * it stays ordered after the release on the session, as `flushFor` keeps it for the others.
   */
  issuedFor(docPaths: Iterable<string>): Promise<void> | null {
    if (this.verifying.size === 0) return null;
    const waits = new Set<Promise<void>>();
    for (const docPath of docPaths) {
      for (const verification of this.verifying) if (verification.docPaths.has(docPath)) waits.add(verification.issued);
    }
    return waits.size === 0 ? null : Promise.all(waits).then(() => undefined);
  }

  /** A new acquisition of `docPath` must be ordered after our release of it: send it now. */
  flushFor(docPath: string): void {
    if (this.pendingDocs.has(docPath)) this.flush();
  }

  /**
   * Hands the not yet sent release of `docPath`'s privateLock to a new acquisition of the same
   * document, which sends it in its own transaction (release and re-acquisition in one commit).
   * Null when there is none, or more than one thing to release there.
   */
  takeForFusion(docPath: string, generation: number): PendingRelease | null {
    if (!this.pendingDocs.has(docPath)) return null;
    const mine = this.pending.filter((p) => p.item.docPath === docPath);
    const only = mine[0];
    if (mine.length !== 1 || only === undefined || only.item.privateLock === null || only.item.deleteDocument) return null;
    if (only.item.privateLock.gone?.() === true || awaitsListing(only)) return null;
    if (only.item.generation !== generation) return null;
    this.pending = this.pending.filter((p) => p !== only);
    this.pendingDocs.delete(docPath);
    return only;
  }

  /** A release taken for fusion goes back to the ordinary way (its fused transaction was refused). */
  resubmit(pending: PendingRelease): void {
    this.pending.push(pending);
    this.pendingDocs.add(pending.item.docPath);
    this.flush();
  }

  /** A release taken for fusion whose transaction's reply was lost: reconcile it like our own. */
  afterUnknownOutcome(pending: PendingRelease, error: unknown): void {
    this.track(this.afterLostReply([pending], error));
  }

  /** Waits (bounded) for what is in flight, e.g. before the session is closed. */
  async drain(timeoutMs: number): Promise<void> {
    this.flush();
    const bound = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
    await Promise.race([Promise.allSettled([...this.inFlight]), bound]);
  }

  private scheduleFlush(): void {
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /** Once the code now running has made its releases (a bulk releases its keys in one loop). */
  private flushSoon(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      if (this.pending.length > 0) this.flush();
    });
  }

  private flush(): void {
    if (this.scheduled !== null) clearImmediate(this.scheduled);
    this.scheduled = null;
    const batch = this.pending;
    this.pending = [];
    this.pendingDocs.clear();
    const link = this.connection.current();
    if (link !== null && batch.some(awaitsListing)) {
      this.track(this.verifyThenSend(link, batch));
      return;
    }
    for (const chunk of chunks(batch)) this.track(this.send(chunk));
  }

  /** One listing of this session's nodes for the whole flush, then its transactions. */
  private async verifyThenSend(link: Link, batch: readonly Pending[]): Promise<void> {
    let issued = (): void => undefined;
    const whenIssued = new Promise<void>((resolve) => (issued = resolve));
    const docPaths = batch.map((pending) => pending.item.docPath);
    const verification: Verification = { docPaths: new Set(docPaths), issued: whenIssued };
    this.verifying.add(verification);
    const done = (): void => {
      this.verifying.delete(verification);
      issued();
    };
    let verified: readonly Pending[];
    try {
      verified = await this.withoutOthersLocks(link, batch, docPaths);
    } catch (error) {
      done();
      // Not listed (connection lost, say): each item is verified by reading its nodes instead.
      await this.afterLostReply(batch, error);
      return;
    }
    // Issued synchronously (when connected) by `send`: whoever waited is ordered after them.
    const sent = [...chunks(verified)].map((chunk) => this.send(chunk));
    done();
    await Promise.all(sent);
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  /**
   * One transaction for `batch`; refused → one per item (by a document's NOTEMPTY: the batch again,
   * `documentRefusals` counting those); outcome unknown → reconcile each. When connected, the
   * transaction is issued synchronously: a new acquisition of the same document issued right after
   * `flushFor` is ordered after it on the session.
   */
  private send(batch: readonly Pending[], documentRefusals = 0): Promise<void> {
    const live = this.dropEnded(batch).filter((pending) => this.withoutGoneLock(pending));
    if (live.length === 0) return Promise.resolve();
    const link = this.connection.current();
    if (link !== null && live.some(awaitsListing)) return this.verifyThenSend(link, live);
    if (link !== null) return this.issue(link, live, documentRefusals);
    return this.connection.whenConnected().then((later) => (later === null ? settle(live) : this.send(live, documentRefusals)));
  }

  private async issue(link: Link, batch: readonly Pending[], documentRefusals: number): Promise<void> {
    if (batch.length === 0) return;
    try {
      const txn = this.txnOf(batch);
      const outcome = await this.onItsWay(link.zk.multi(txn.ops));
      if (outcome.ok) return settle(batch);
      const failedOwner = txn.owners[outcome.failedIndex];
      const failedRole = txn.roles[outcome.failedIndex];
      if (batch.length > 1 && failedOwner !== undefined && failedRole === 'document' && outcome.code === 'NOTEMPTY') {
        // Somebody queued under a document we created: that one stays (all of them after a few
        // such refusals), the rest go again as one transaction, not one per item of the batch.
        const keep = documentRefusals + 1 >= MAX_DOCUMENT_REFUSALS ? batch : [failedOwner];
        for (const pending of keep) this.keepDocument(pending);
        await this.send(batch, documentRefusals + 1);
        return;
      }
      if (batch.length > 1) {
        await Promise.all(batch.map((p) => this.send([p])));
        return;
      }
      await this.retryWithout(batch[0]!, failedRole, outcome.code);
    } catch (error) {
      await this.afterLostReply(batch, error);
    }
  }

  /**
   * The items whose privateLock no watch vouches for keep it only when it is one of this session's
   * nodes now (listed in one request): a privateLock deleted by hand and re-created by the next
   * holder belongs to that holder's session. Within the session, no other lock of this process can
   * have re-created it before this release: a new acquisition of the document is ordered after it.
   */
  private async withoutOthersLocks(link: Link, batch: readonly Pending[], docPaths: readonly string[]): Promise<readonly Pending[]> {
    // A holder watch whose read is on its way settles it for free once that read answers; one not
    // answered within the bound stays unsure, and the listing below decides.
    const watchReads = batch.flatMap((pending) => {
      const lock = pending.item.privateLock;
      return lock?.unsure?.() === true && lock.whenSure !== undefined ? [lock.whenSure()] : [];
    });
    if (watchReads.length > 0) await withinMs(WATCH_READ_WAIT_MS, Promise.all(watchReads));
    const live = batch.filter((pending) => this.withoutGoneLock(pending));
    if (!live.some(awaitsListing)) return live;
    const ours = await this.privateLocksListed(link, listingPrefix(docPaths));
    const kept: Pending[] = [];
    for (const pending of live) {
      if (!awaitsListing(pending)) {
        kept.push(pending);
        continue;
      }
      const { item } = pending;
      if (ours === null || ours.has(item.docPath)) {
        // Marked rather than copied without `verifyFirst`: a bulk's release is hundreds of items.
        pending.listed = true;
        kept.push(pending);
        continue;
      }
      // Deleted by hand and maybe taken by the next holder: the lock was lost while held.
      this.lockLost(item.docPath, 'NONODE');
      pending.item = { ...item, privateLock: null, deleteDocument: false };
      if (pending.item.entry === null) pending.done();
      else kept.push(pending);
    }
    return kept;
  }

  /**
   * The documents under `prefix` whose privateLock is one of this session's nodes now; null when
   * the server cannot list a session's nodes (before 3.6): then nothing is verified. Keyed by the
   * document's path, which the releases already have (a lookup, not a new path string each).
   */
  private async privateLocksListed(link: Link, prefix: string): Promise<ReadonlySet<string> | null> {
    if (this.ephemeralsUnsupported) return null;
    let paths: readonly string[];
    try {
      paths = await link.zk.ephemerals(prefix);
    } catch (error) {
      if (!isZkCode(error, 'UNIMPLEMENTED')) throw error;
      this.ephemeralsUnsupported = true;
      return null;
    }
    const docs = new Set<string>();
    for (const path of paths) if (path.endsWith(PRIVATE_LOCK_SUFFIX)) docs.add(path.slice(0, -PRIVATE_LOCK_SUFFIX.length));
    return docs;
  }

  /** Counts `txn` among those on their way; the last answer sends the releases that waited for it. */
  private async onItsWay<T>(txn: Promise<T>): Promise<T> {
    this.txnsOnTheirWay++;
    try {
      return await txn;
    } finally {
      this.txnsOnTheirWay--;
      if (this.txnsOnTheirWay === 0 && this.pending.length > 0) this.scheduleFlush();
    }
  }

  private keepDocument(pending: Pending): void {
    if (!pending.item.deleteDocument) return;
    pending.item = { ...pending.item, deleteDocument: false };
    this.documentKept(pending.item.docPath);
  }

  /** The operations of `batch` in one transaction, and which release each stands for. */
  private txnOf(batch: readonly Pending[]): ReleaseTxn {
    const txn = new ReleaseTxn();
    for (const pending of batch) txn.add(pending, this.epoch);
    return txn;
  }

  private async retryWithout(pending: Pending, role: Role | undefined, code: string): Promise<void> {
    // A forced release happened since our lock's epoch was read — maybe of another document: verify.
    if (role === 'epoch') return this.verify(pending);
    if (role === 'document' && code === 'NOTEMPTY') this.keepDocument(pending);
    // Our queue entry deleted by somebody else (by hand, or with a forced release): an operator
    // stepped in here, and privateLock may have gone the same way and been taken on a document
    // node created anew, whose version the owner token cannot tell from ours: read it first.
    if (role === 'entry' && code === 'NONODE' && pending.item.privateLock !== null) {
      pending.item = { ...pending.item, entry: null };
      return this.verify(pending);
    }
    const next = withoutFailedPart(pending.item, role, code);
    const { docPath } = pending.item;
    // The owner check (or the document's delete by the same token) refused: another grant or a
    // forced release came after ours. privateLock's delete refused (NONODE): deleted by hand.
    // Either way the lock was lost while held; what is left (our queue entry) goes on its own,
    // and privateLock — maybe the next holder's now — is never tried again.
    const lockNotOurs = role === 'check' || role === 'lock' || (role === 'document' && code !== 'NOTEMPTY');
    if (lockNotOurs) this.lockLost(docPath, code);
    if (next === null) return settle([pending]);
    pending.item = next;
    await this.send([pending]);
  }

  /**
   * The connection dropped before the answer, or the transaction was refused as a whole request
   * (SESSIONMOVED, THROTTLEDOP, an answer the client could not read): it may or may not have run.
   * Look at what is there and delete only what is ours.
   */
  private async afterLostReply(batch: readonly Pending[], error: unknown): Promise<void> {
    if (isSessionEnd(error)) return settle(batch);
    // Settled as it was, privateLock stayed ours until the session ended: every writer waited.
    if (!toZkError(error).connectionLost) await this.pauseAfterWholeRefusal(batch, error);
    await this.connection.settle();
    const link = await this.connection.whenConnected();
    if (link === null) return settle(batch);
    await Promise.all(
      this.dropEnded(batch).map(async (pending) => {
        const still = await stillOurs(link, pending.item, this.epoch).catch(() => pending.item);
        if (still === null) return settle([pending]);
        pending.item = still;
        await this.send([pending]);
      }),
    );
  }

  /** Waits before another try, longer each time (bounded); says so when a release keeps being refused. */
  private async pauseAfterWholeRefusal(batch: readonly Pending[], error: unknown): Promise<void> {
    let tries = 0;
    for (const pending of batch) {
      pending.refusedWhole = (pending.refusedWhole ?? 0) + 1;
      tries = Math.max(tries, pending.refusedWhole);
      if (pending.refusedWhole === WHOLE_REFUSALS_LOGGED) {
        this.logger.error({ err: error, docPath: pending.item.docPath }, 'lock release refused again and again: trying again while the session lives');
      }
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(tries * WHOLE_REFUSAL_BACKOFF_MS, MAX_WHOLE_REFUSAL_PAUSE_MS)));
  }

  /** The epoch or document check was refused: is privateLock still ours? Then delete it against both as they are now. */
  private async verify(pending: Pending): Promise<void> {
    pending.verified = (pending.verified ?? 0) + 1;
    if (pending.verified > MAX_VERIFICATIONS) {
      this.logger.error({ docPath: pending.item.docPath }, 'lock release gave up: forced releases keep happening; the session end removes privateLock');
      return settle([pending]);
    }
    const link = await this.connection.whenConnected();
    if (link === null) return settle([pending]);
    if (this.dropEnded([pending]).length === 0) return;
    try {
      const still = await stillOurs(link, pending.item, this.epoch);
      if (still === null) return settle([pending]);
      pending.item = still;
    } catch (error) {
      return this.afterLostReply([pending], error);
    }
    await this.send([pending]);
  }

  /**
   * Drops a privateLock its holder's watch saw go from the item (settled when nothing is left):
   * deleted by path, the name might be the next holder's node. False when the item is done.
   */
  private withoutGoneLock(pending: Pending): boolean {
    const lock = pending.item.privateLock;
    if (lock?.gone?.() !== true) return true;
    this.logger.warn({ docPath: pending.item.docPath }, 'privateLock went while held (deleted by hand?): not deleting that name');
    pending.item = { ...pending.item, privateLock: null, deleteDocument: false };
    if (pending.item.entry !== null) return true;
    pending.done();
    return false;
  }

  /** Items of a session that ended are done: their nodes died with it. */
  private dropEnded(batch: readonly Pending[]): Pending[] {
    const generation = this.connection.generation();
    const live: Pending[] = [];
    for (const pending of batch) {
      if (pending.item.generation === generation) live.push(pending);
      else pending.done();
    }
    return live;
  }
}

function settle(batch: readonly Pending[]): void {
  for (const pending of batch) pending.done();
}

function isSessionEnd(error: unknown): boolean {
  return isZkCode(error, 'SESSIONEXPIRED') || isZkCode(error, 'INVALIDSTATE') || isZkCode(error, 'CLOSING');
}
