import { toZkError } from '../../zookeeper/zk-errors.js';
import type { Link } from './connection.js';
import { transitionOf } from './cohort-states.js';
import { CohortBase } from './cohort-base.js';
import { HolderWatch } from './holder-watch.js';
import { lastSegment } from './queue-wait.js';
import type { ReleaseItem, ReleasePace } from './release-item.js';
import { classifyFailure as classify } from './round-trip.js';

/**
 * The one way a document lock gives the lock back to ZooKeeper, by what it does:
 * - `finish`    nobody here wants it: compare-and-delete privateLock and our entry (coalesced
 *               with other releases when nobody else is known to wait), then the lock is done;
 * - `endLinger` lingering is over (its time, another process queued, the engine closing): `finish`
 *               from `idle`;
 * - `requeue`   others wait and the hand-over bound is reached: one transaction re-queues us at our
 *               best local rank and gives privateLock back, so our waiters queue behind them;
 * - `stepBack`  we created privateLock but somebody is served before us: delete it, keep our place;
 * - `dropLost`  the lock is lost: delete what is still ours and never hand it over; the waiters
 *               start again with a fresh acquisition, ordered after this release.
 * Each release is a compare-and-delete guarded by the document's version and the forced-release
 * epoch (release-batcher.ts): it never deletes another holder's privateLock.
 */
export type GiveBack = 'finish' | 'endLinger' | 'requeue' | 'stepBack' | 'dropLost';

/**
 * Operations of the yield transaction that, refused, prove privateLock is not ours any more:
 * privateLock's own delete. The others prove nothing about it — the document's version check (a
 * forced release of the holder before us, between our read of the version and our create, bumps
 * it too), the epoch check (a forced release, maybe of another document) and the delete of our
 * old entry (deleted by hand) — and the release verifies before deleting.
 */
const YIELD_LOCK_GONE_OPS: ReadonlySet<number> = new Set([3]);

/**
 * Ownership of privateLock and giving it back: the one verb (`giveBack`), the epoch and watches
 * that tell a held lock is lost (the safety margin, an operator's forced release, a delete by
 * hand), and whether a release takes the document node with it and how soon it goes out.
 */
export abstract class OwningCohort extends CohortBase {
  /** Gives the lock back to ZooKeeper, the way `how` says (see `GiveBack`). */
  giveBack(how: GiveBack): Promise<void> {
    switch (how) {
      case 'finish':
        return this.finish();
      case 'endLinger':
        this.endLinger();
        return Promise.resolve();
      case 'requeue':
        return this.requeue();
      case 'stepBack':
        return this.stepBack();
      case 'dropLost':
        return this.dropLost();
    }
  }

  /** Nobody here wants the lock any more: delete what is ours (compare-and-delete) and finish. */
  private finish(): Promise<void> {
    return this.startFinishing() ? this.completeFinish() : Promise.resolve();
  }

  /**
   * `finish` for a holder nobody waits on (a bulk's keys, hundreds at once): the same steps, with
   * the release batcher calling `releaseCommitted` instead of an async frame and two promises per key.
   */
  protected finishInBackground(): void {
    if (!this.startFinishing()) return;
    if (this.nodes.uncertain) void this.completeFinish();
    else this.ctx.releases.submitFor(this, this.finalRelease(), this.releasePace());
  }

  /** The background finish's release is through, or moot. */
  releaseCommitted(): void {
    this.ctx.releasing.delete(this.guid);
    this.toReleased();
  }

  /** The rest of a finish once started: find our nodes first when a reply was lost, delete them, done. */
  private async completeFinish(): Promise<void> {
    try {
      if (this.nodes.uncertain) await this.recovery.findOwnNodes();
      await this.ctx.releases.submit(this.finalRelease(), this.releasePace());
    } finally {
      this.ctx.releasing.delete(this.guid);
    }
    this.toReleased();
  }

  /** The synchronous start of a finish; false when the lock was released already. */
  private startFinishing(): boolean {
    this.ctx.detach(this.docPath, this);
    // Only a lock that may linger learns from coming back soon: a bulk's keys never linger, and
    // noting them (1,000 a bulk) only churned the bounded memory of recent releases.
    if (this.state === 'held' && this.mayLinger) this.ctx.recentReleases.noteReleased(this.docPath);
    if (this.state === 'released') return false;
    this.apply('finish');
    // Out of the engine's map, our nodes are still ours until the release is through: the orphan sweep leaves them be.
    this.ctx.releasing.add(this.guid);
    return true;
  }

  /** What the finish deletes, and whether the document container goes with it. */
  private finalRelease(): ReleaseItem {
    const deleteDocument = this.deletesDocument();
    if (deleteDocument) this.ctx.containers.forgetPath(this.docPath);
    else if (this.nodes.createdDocument) this.ctx.containers.remember(this.docPath);
    return { docPath: this.docPath, generation: this.generation, privateLock: this.nodes.heldLock(this.holderWatch), entry: this.nodes.entry, deleteDocument };
  }

  /**
   * `coalesced` only where nobody else is known to wait: no queue entry of ours, no contention
   * seen here lately, nobody queued when the lock was granted. A waiter that came since waits at
   * most for this process's release transactions already on their way.
   */
  private releasePace(): ReleasePace {
    const nobodyKnown = this.nodes.entry === null && !this.ctx.contention.contended(this.docPath) && this.nobodyElseQueued();
    return nobodyKnown ? 'coalesced' : 'now';
  }

  /**
   * A document container we created goes with our release (refused, and kept, when anybody else
   * has a node under it). ZooKeeper's container reaper deletes at most
   * `znode.container.maxPerMinute` (10,000 by default) empty containers a minute, so a steady
   * stream of writes to new documents left them to pile up in the server (measured: 460,000 after
   * a few benchmark runs, going down by 165 a second). Kept only where this process writes the
   * document again and again: its next lock there may linger, and fuses its acquisition with this
   * release when that has not gone out yet. Never with `zookeeper.lock.document.cleanup=reaper`.
   */
  private deletesDocument(): boolean {
    return this.ctx.deletesCreatedDocuments && this.nodes.createdDocument && !(this.mayLinger && this.writtenAgain());
  }

  /** This process wants the document again and again: a local hand-over, or back within the linger window. */
  protected wantedAgain(): boolean {
    return this.handedOverHere || this.releasedAgoMs <= this.ctx.lingerMs;
  }

  /** A local hand-over, or back within the recent releases' window (a second, or the linger window when longer). */
  private writtenAgain(): boolean {
    return this.handedOverHere || this.releasedAgoMs < Number.POSITIVE_INFINITY;
  }

  /** Ends lingering (timer, engine closing, another process queued): the ordinary release. */
  private endLinger(): void {
    if (transitionOf(this.state, 'lingerEnded') === undefined) return;
    this.apply('lingerEnded');
    void this.giveBack('finish');
  }

  /**
   * Others wait (or a fresh grant is wanted): one transaction re-queues us at our best local
   * rank and gives privateLock back — [create entry, check(doc, v), check(epoch), delete
   * (privateLock), delete(old entry)] — so our waiters queue behind the other processes, FIFO.
   */
  private async requeue(): Promise<void> {
    this.apply('requeue');
    const link = await this.link();
    if (link === null) {
      await this.giveBack('finish');
      return;
    }
    const rank = this.bestRank();
    const old = this.nodes.entry;
    try {
      // The yield deletes privateLock by name. A lock no holder watch guards (a bulk's key, handed
      // on to a waiter here) reads it first: deleted by hand, the name may be the next holder's.
      if (!this.privateLockWatched() && !(await this.privateLockStillOurs(link))) {
        this.nodes.privateLockGone = true;
        this.apply('requeueRefused');
        return this.giveBack('dropLost');
      }
      const outcome = await link.zk.multi([
        { type: 'create', path: `${this.docPath}/${this.prefixOfRank(rank)}-`, data: this.nodeData(), mode: 'ephemeralSequential' },
        { type: 'check', path: this.docPath, version: this.nodes.docVersion },
        this.ctx.forcedEpoch.checkOp(this.nodes.epochAtCreate),
        { type: 'delete', path: this.privatePath, version: 0 },
        ...(old === null ? [] : [{ type: 'delete' as const, path: `${this.docPath}/${old}`, version: -1 }]),
      ]);
      if (!outcome.ok) {
        // privateLock is gone: an operator force-released it. The document's version or the epoch
        // moved, or our old entry was deleted by hand: privateLock may still be ours, and the
        // release's compare-and-delete finds out (it never deletes another holder's).
        this.nodes.privateLockGone = YIELD_LOCK_GONE_OPS.has(outcome.failedIndex);
        this.apply('requeueRefused');
        return this.giveBack('dropLost');
      }
      this.nodes.entry = lastSegment(outcome.results[0]?.path ?? '');
      this.nodes.entryRank = rank;
      this.nodes.disown();
      void this.acquireLoop('readQueue');
    } catch (error) {
      // Refused as a whole request, not by one of its operations (THROTTLEDOP, say; SESSIONMOVED and
      // an unreadable answer are 'unknown' already): look at what is ours, as after a lost
      // connection. Thrown from here, it left the lock in 'yielding' (no waiter ever served) and
      // rejected the release.
      const failure = classify(error);
      void this.acquireLoop(this.afterFailureStep(failure.kind === 'refused' ? { kind: 'unknown' } : failure));
    }
  }

  /** A holder watch guards our current privateLock: its deletion would have made the lock lost. */
  private privateLockWatched(): boolean {
    return this.holderWatch !== null && this.holderWatch.czxid === this.nodes.ownedCzxid;
  }

  /** privateLock is still the node we created, of our session (NONODE: it is not). */
  private async privateLockStillOurs(link: Link): Promise<boolean> {
    try {
      const node = await link.zk.get(this.privatePath);
      return node.stat.czxid === this.nodes.ownedCzxid && node.stat.ephemeralOwner === link.zk.sessionId;
    } catch (error) {
      if (toZkError(error).code === 'NONODE') return false;
      throw error;
    }
  }

  /**
   * A lost lock is never handed over: delete what is still ours, then the waiters (and whoever
   * arrives meanwhile) start over with a fresh acquisition, ordered after that release.
   */
  private async dropLost(): Promise<void> {
    this.apply('finish');
    await this.ctx.releases.submit({
      docPath: this.docPath,
      generation: this.generation,
      privateLock: this.nodes.privateLockGone ? null : this.nodes.heldLock(this.holderWatch),
      entry: this.nodes.entry,
      deleteDocument: false,
    });
    this.ctx.detach(this.docPath, this);
    // The session may have ended meanwhile: then `end` failed the waiters already.
    if (this.isReleased()) return;
    this.toReleased();
    const waiters = this.waiters.drain();
    if (waiters.length > 0) this.ctx.rehome(this.key, waiters);
  }

  /** A privateLock we may not keep (somebody is served before us): give it back, keep our place in the queue. */
  private async stepBack(): Promise<void> {
    const lock = this.nodes.ownedLock(this.holderWatch);
    this.nodes.disown();
    await this.ctx.releases.submit({ docPath: this.docPath, generation: this.generation, privateLock: lock, entry: null, deleteDocument: false });
  }

  private toLost(reason: string): void {
    const from = this.state;
    if (transitionOf(from, 'lose') === undefined) return;
    this.apply('lose');
    if (from === 'idle') {
      void this.giveBack('dropLost');
      return;
    }
    if (this.holder?.markLost(reason) === true) this.ctx.events.lost({ key: this.key, reason });
  }

  /** The link was silent past the safety margin: stop vouching, but keep privateLock while its write may still run. */
  marginExceeded(generation: number): void {
    if (this.generation <= generation) this.toLost('ZooKeeper connection suspended past the safety margin');
  }

  /** An operator force-released our privateLock through this process. */
  forcedHere(): void {
    // The answer may come after this lock gave privateLock up (a yield): nothing of ours is gone then.
    if (!this.nodes.ownsPrivateLock) return;
    this.nodes.privateLockGone = true;
    this.toLost('forced release by an operator');
  }

  /**
   * Call right before a privateLock create is issued: the epoch known now is at most the one at
   * the create, so a release checking against it is refused after any later forced release.
   */
  beforeCreate(): void {
    this.nodes.epochAtCreate = this.ctx.forcedEpoch.known();
    // The queue read that goes with the create (fast path, arbitration, a batch's plan) is as of now.
    this.arrivalsAtQueueRead = this.arrivals;
  }

  /**
   * A single acquisition's grant watches its privateLock (a read sent now, not awaited): deleted
   * by hand, the lock is lost at once — nothing new is forwarded or handed over under it — and
   * its release deletes nothing by that name. A bulk's keys (one read each would double a bulk's
   * requests) learn it at their release, which verifies first (release-batcher.ts) — unless a
   * request of this process comes to wait for the key: the lock it is handed on to is watched
   * (`evenForBulk`), one read per such lock.
   */
  protected watchPrivateLock(evenForBulk = false): void {
    const czxid = this.nodes.ownedCzxid;
    if ((!this.mayLinger && !evenForBulk) || czxid === null || this.holderWatch?.czxid === czxid) return;
    this.holderWatch = new HolderWatch(this.ctx.connection, this.privatePath, czxid, this.generation, () => this.privateLockWent(czxid));
    this.holderWatch.arm();
  }

  /** Our privateLock of `czxid` went, and not by our own release, yield or step-back. */
  private privateLockWent(czxid: number): void {
    if (this.nodes.ownedCzxid !== czxid) return;
    if (this.state === 'lost') this.nodes.privateLockGone = true;
    if (!this.holdsPrivateLock()) return;
    this.nodes.privateLockGone = true;
    this.ctx.logger.warn({ key: this.key }, 'privateLock was deleted while held (by hand?): the lock is lost, nothing is forwarded under it');
    this.toLost('privateLock was deleted while held (a forced release, or by hand)');
  }

  /**
   * A forced release at `forcedZxid` was seen (the forced-release epoch moved): if our privateLock
   * is older, read it — gone, or not ours any more, it was force-released. This replaces a holder
   * watch per grant (a read per write: 11–14% of an uncontended write's CPU in `write-uncontended`)
   * and covers a bulk's keys too, which never had one. Locks created after it are untouched by it.
   */
  forcedReleaseSeen(forcedZxid: number): void {
    if (!this.holdsPrivateLock() || this.nodes.ownedCzxid === null || this.nodes.ownedCzxid > forcedZxid) return;
    const link = this.ctx.connection.current();
    // No link: a forced release meanwhile fires the epoch watch again when the session's link is back.
    if (link === null || link.generation !== this.generation) return;
    this.verifyStillOurs(link);
  }

  private verifyStillOurs(link: Link): void {
    const incarnation = this.incarnation;
    const forced = (): void => {
      if (incarnation !== this.incarnation || !this.holdsPrivateLock()) return;
      this.nodes.privateLockGone = true;
      this.toLost('privateLock was deleted (forced release by an operator)');
    };
    link.zk.get(this.privatePath).then(
      (node) => {
        if (node.stat.czxid !== this.nodes.ownedCzxid) forced();
      },
      (error: unknown) => {
        // Only a lost connection or an ended session say nothing about privateLock here; any other
        // failure to read it (NONODE, but also SESSIONMOVED) counts as the forced release it may be.
        const zkError = toZkError(error);
        if (!zkError.connectionLost && !zkError.sessionGone) forced();
      },
    );
  }

  /** privateLock is ours and vouched for: a local holder has it, or it lingers for the next one. */
  private holdsPrivateLock(): boolean {
    return this.state === 'held' || this.state === 'idle';
  }

  private isReleased(): boolean {
    return this.state === 'released';
  }
}
