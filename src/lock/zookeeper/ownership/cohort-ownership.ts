import { toZkError } from '../../../zookeeper-client/zk-errors.js';
import type { Link } from '../session/connection.js';
import type { CohortCore } from '../cohort-core.js';
import { holdsLock } from '../cohort-decisions.js';
import type { CohortRecovery } from '../recovery/cohort-recovery.js';
import { type GiveBack, type LoopStep, transitionOf } from '../cohort-states.js';
import { HolderWatch } from './holder-watch.js';
import { type LocalCohort, prefixOfRank } from '../cohort/local-cohort.js';
import { lastSegment } from '../queue/queue-wait.js';
import type { ReleaseItem, ReleaseOwner, ReleasePace } from './release-item.js';
import { type Failure, classifyFailure as classify } from '../session/round-trip.js';

/**
 * Operations of the yield transaction that, refused, prove privateLock is not ours any more: the
 * owner check (our grant's token: anybody else's grant or a forced release moved the document's
 * version since, owner-token.ts) and privateLock's own delete (NONODE: deleted by hand). The
 * others prove nothing about it — the epoch check (a forced release, maybe of another document)
 * and the delete of our old entry (deleted by hand) — and the release verifies before deleting.
 */
const YIELD_LOCK_GONE_OPS: ReadonlySet<number> = new Set([1, 3]);

/** What ownership asks of the document lock that holds it: the acquisition loop and the recovery. */
export interface OwnershipHost {
  /** Runs the acquisition loop from `step` (a re-queue goes on waiting in the queue). */
  continueLoop(step: LoopStep): void;
  /** Runs the acquisition loop from what `failure` calls for (cohort-queue-loop.ts). */
  continueAfterFailure(failure: Failure): void;
  /** Reconciliation after a lost reply (cohort-recovery.ts). */
  recovery(): CohortRecovery;
}

/**
 * Ownership of privateLock and giving it back: the one verb (`giveBack`, its ways in
 * cohort-states.ts), the epoch and watches that tell a held lock is lost (the safety margin, an
 * operator's forced release, a delete by hand), and whether a release takes the document node
 * with it and how soon it goes out.
 */
export class CohortOwnership implements ReleaseOwner {
  private readonly core: CohortCore;
  private readonly cohort: LocalCohort;
  private readonly host: OwnershipHost;
  /** The watch on the privateLock we hold (its czxid's), for a single acquisition's grant. */
  private holderWatch: HolderWatch | null = null;

  /** `host`: the document lock itself, which the engine detaches when its release starts. */
  constructor(core: CohortCore, cohort: LocalCohort, host: OwnershipHost) {
    this.core = core;
    this.cohort = cohort;
    this.host = host;
  }

  /** Gives the lock back to ZooKeeper, the way `how` says (see `GiveBack`). */
  giveBack(how: GiveBack): Promise<void> {
    switch (how) {
      case 'finish':
        return this.finish();
      case 'lingerEnded':
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
  finishInBackground(): void {
    if (!this.startFinishing()) return;
    if (this.core.nodes.uncertain) void this.completeFinish();
    else this.core.ctx.releases.submitFor(this, this.finalRelease(), this.releasePace());
  }

  /** The background finish's release is through, or moot. */
  releaseCommitted(): void {
    this.core.ctx.releasing.delete(this.core.guid);
    this.core.apply('end');
  }

  /** The rest of a finish once started: find our nodes first when a reply was lost, delete them, done. */
  private async completeFinish(): Promise<void> {
    const core = this.core;
    try {
      if (core.nodes.uncertain) await this.host.recovery().findOwnNodes();
      await core.ctx.releases.submit(this.finalRelease(), this.releasePace());
    } finally {
      core.ctx.releasing.delete(core.guid);
    }
    core.apply('end');
  }

  /** The synchronous start of a finish; false when the lock was released already. */
  private startFinishing(): boolean {
    const core = this.core;
    core.ctx.detach(core.docPath, this.host);
    // Only a lock that may linger learns from coming back soon: a bulk's keys never linger, and
    // noting them (1,000 a bulk) only churned the bounded memory of recent releases.
    if (core.state === 'held' && this.cohort.mayLinger) core.ctx.recentReleases.noteReleased(core.docPath);
    if (core.state === 'released') return false;
    core.apply('finish');
    // Out of the engine's map, our nodes are still ours until the release is through: the orphan sweep leaves them be.
    core.ctx.releasing.add(core.guid);
    return true;
  }

  /** What the finish deletes, and whether the document container goes with it. */
  private finalRelease(): ReleaseItem {
    const core = this.core;
    const deleteDocument = this.deletesDocument();
    if (deleteDocument) core.ctx.containers.forgetPath(core.docPath);
    else if (core.nodes.createdDocument) core.ctx.containers.remember(core.docPath);
    return { docPath: core.docPath, generation: core.generation, privateLock: core.nodes.heldLock(this.holderWatch), entry: core.nodes.entry, deleteDocument };
  }

  /**
   * `coalesced` only where nobody else is known to wait: no queue entry of ours, no contention
   * seen here lately, nobody queued when the lock was granted. A waiter that came since waits at
   * most for this process's release transactions already on their way.
   */
  private releasePace(): ReleasePace {
    const core = this.core;
    const nobodyKnown = core.nodes.entry === null && !core.ctx.contention.contended(core.docPath) && this.cohort.nobodyElseQueued();
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
    return this.core.ctx.deletesCreatedDocuments && this.core.nodes.createdDocument && !(this.cohort.mayLinger && this.cohort.writtenAgain());
  }

  /** Ends lingering (timer, engine closing, another process queued): the ordinary release. */
  private endLinger(): void {
    if (transitionOf(this.core.state, 'lingerEnded') === undefined) return;
    this.core.apply('lingerEnded');
    void this.giveBack('finish');
  }

  /**
   * Others wait (or a fresh grant is wanted): one transaction re-queues us at our best local
   * rank and gives privateLock back — [create entry, check(doc, v), check(epoch), delete
   * (privateLock), delete(old entry)] — so our waiters queue behind the other processes, FIFO.
   */
  private async requeue(): Promise<void> {
    const core = this.core;
    const nodes = core.nodes;
    core.apply('requeue');
    const link = await core.link();
    if (link === null) {
      await this.giveBack('finish');
      return;
    }
    const rank = this.cohort.bestRank();
    const old = nodes.entry;
    try {
      // The yield deletes privateLock by name. A lock no holder watch guards (a bulk's key, handed
      // on to a waiter here) reads it first: deleted by hand, the name may be the next holder's.
      if (!this.privateLockWatched() && !(await this.privateLockStillOurs(link))) {
        nodes.privateLockWent(true);
        core.apply('requeueRefused');
        return this.giveBack('dropLost');
      }
      const outcome = await link.zk.multi([
        { type: 'create', path: `${core.docPath}/${prefixOfRank(rank, core)}-`, data: this.cohort.nodeData(), mode: 'ephemeralSequential' },
        { type: 'check', path: core.docPath, version: nodes.token },
        core.ctx.forcedEpoch.checkOp(nodes.epochAtCreate),
        { type: 'delete', path: core.privatePath, version: 0 },
        ...(old === null ? [] : [{ type: 'delete' as const, path: `${core.docPath}/${old}`, version: -1 }]),
      ]);
      if (!outcome.ok) {
        // The owner check failed or privateLock is gone: the lock was lost (another grant after a
        // deletion by hand, a forced release). The epoch moved or our old entry was deleted by
        // hand: privateLock may still be ours, and the release's compare-and-delete finds out (it
        // never deletes another holder's).
        const lost = YIELD_LOCK_GONE_OPS.has(outcome.failedIndex);
        nodes.privateLockWent(lost);
        if (lost) core.ctx.lockLostAtRelease(core.docPath, outcome.code);
        core.apply('requeueRefused');
        return this.giveBack('dropLost');
      }
      nodes.queued(lastSegment(outcome.results[0]?.path ?? ''), rank, outcome.results[0]?.stat?.czxid ?? 0);
      nodes.disown();
      this.host.continueLoop('readQueue');
    } catch (error) {
      // Refused as a whole request, not by one of its operations (THROTTLEDOP, say; SESSIONMOVED and
      // an unreadable answer are 'unknown' already): look at what is ours, as after a lost
      // connection. Thrown from here, it left the lock in 'yielding' (no waiter ever served) and
      // rejected the release.
      const failure = classify(error);
      this.host.continueAfterFailure(failure.kind === 'refused' ? { kind: 'unknown' } : failure);
    }
  }

  /** A holder watch guards our current privateLock, and is not re-reading it: its deletion would have made the lock lost. */
  private privateLockWatched(): boolean {
    const watch = this.holderWatch;
    return watch !== null && watch.czxid === this.core.nodes.ownedCzxid && !watch.unsure();
  }

  /** privateLock is still the node we created, of our session (NONODE: it is not). */
  private async privateLockStillOurs(link: Link): Promise<boolean> {
    try {
      const node = await link.zk.get(this.core.privatePath);
      return node.stat.czxid === this.core.nodes.ownedCzxid && node.stat.ephemeralOwner === link.zk.sessionId;
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
    const core = this.core;
    core.apply('finish');
    await core.ctx.releases.submit({
      docPath: core.docPath,
      generation: core.generation,
      privateLock: core.nodes.privateLockGone ? null : core.nodes.heldLock(this.holderWatch),
      entry: core.nodes.entry,
      deleteDocument: false,
    });
    core.ctx.detach(core.docPath, this.host);
    // The session may have ended meanwhile: then `end` failed the waiters already.
    if (core.state === 'released') return;
    core.apply('end');
    const waiters = this.cohort.drainWaiters();
    if (waiters.length > 0) core.ctx.rehome(core.key, waiters);
  }

  /** A privateLock we may not keep (somebody is served before us): give it back, keep our place in the queue. */
  private async stepBack(): Promise<void> {
    const core = this.core;
    const lock = core.nodes.ownedLock(this.holderWatch);
    core.nodes.disown();
    await core.ctx.releases.submit({ docPath: core.docPath, generation: core.generation, privateLock: lock, entry: null, deleteDocument: false });
  }

  private toLost(reason: string): void {
    const from = this.core.state;
    if (transitionOf(from, 'lose') === undefined) return;
    this.core.apply('lose');
    if (from === 'idle') {
      void this.giveBack('dropLost');
      return;
    }
    this.cohort.holderLost(reason);
  }

  /** The link was silent past the safety margin: stop vouching, but keep privateLock while its write may still run. */
  marginExceeded(generation: number): void {
    if (this.core.generation <= generation) this.toLost('ZooKeeper connection suspended past the safety margin');
  }

  /** An operator force-released our privateLock through this process. */
  forcedHere(): void {
    // The answer may come after this lock gave privateLock up (a yield): nothing of ours is gone then.
    if (!this.core.nodes.ownsPrivateLock) return;
    this.core.nodes.privateLockWent(true);
    this.toLost('forced release by an operator');
  }

  /**
   * Call right before a privateLock create is issued: the epoch known now is at most the one at
   * the create, so a release checking against it is refused after any later forced release.
   * `readSentBefore`: the queue read that places the grant went out earlier (a batch reads its
   * known documents first) and was noted then; otherwise it goes out with the create, as of now.
   */
  beforeCreate(readSentBefore = false): void {
    this.core.nodes.creating(this.core.ctx.forcedEpoch.known());
    if (!readSentBefore) this.cohort.queueRead();
  }

  /**
   * At a grant: a forced release already seen may be newer than a create whose answer came only
   * now; and a single acquisition's grant watches its privateLock.
   */
  granted(): void {
    this.forcedReleaseSeen(this.core.ctx.forcedEpoch.latestForcedZxid());
    this.watchPrivateLock();
  }

  /**
   * A single acquisition's grant watches its privateLock (a read sent now, not awaited): deleted
   * by hand, the lock is lost at once — nothing new is forwarded or handed over under it — and
   * its release deletes nothing by that name. A bulk's keys (one read each would double a bulk's
   * requests) learn it at their release, which verifies first (release-batcher.ts) — unless a
   * request of this process comes to wait for the key: the lock it is handed on to is watched
   * (`evenForBulk`), one read per such lock.
   */
  watchPrivateLock(evenForBulk = false): void {
    const core = this.core;
    const czxid = core.nodes.ownedCzxid;
    if ((!this.cohort.mayLinger && !evenForBulk) || czxid === null || this.holderWatch?.czxid === czxid) return;
    this.holderWatch = new HolderWatch(core.ctx.connection, core.privatePath, czxid, core.generation, () => this.privateLockWent(czxid));
    this.holderWatch.arm();
  }

  /** The document node went while we held its lock: our privateLock had gone before it. */
  documentWent(): void {
    const czxid = this.core.nodes.ownedCzxid;
    if (czxid !== null) this.privateLockWent(czxid);
  }

  /** Our privateLock of `czxid` went, and not by our own release, yield or step-back. */
  private privateLockWent(czxid: number): void {
    const core = this.core;
    if (core.nodes.ownedCzxid !== czxid) return;
    if (core.state === 'lost') core.nodes.privateLockWent(true);
    if (!holdsLock(core.state)) return;
    core.nodes.privateLockWent(true);
    core.ctx.logger.warn({ key: core.key }, 'privateLock was deleted while held (by hand?): the lock is lost, nothing is forwarded under it');
    this.toLost('privateLock was deleted while held (a forced release, or by hand)');
  }

  /**
   * A forced release at `forcedZxid` was seen (the forced-release epoch moved): if our privateLock
   * is older, read it — gone, or not ours any more, it was force-released. This covers a bulk's
   * keys too, which have no holder watch; locks created after it are untouched by it.
   */
  forcedReleaseSeen(forcedZxid: number): void {
    const core = this.core;
    if (!holdsLock(core.state) || core.nodes.ownedCzxid === null || core.nodes.ownedCzxid > forcedZxid) return;
    const link = core.currentLink();
    // No link: a forced release meanwhile fires the epoch watch again when the session's link is back.
    if (link === null) return;
    this.verifyStillOurs(link);
  }

  private verifyStillOurs(link: Link): void {
    const core = this.core;
    const incarnation = core.incarnation;
    const forced = (): void => {
      if (incarnation !== core.incarnation || !holdsLock(core.state)) return;
      core.nodes.privateLockWent(true);
      this.toLost('privateLock was deleted (forced release by an operator)');
    };
    link.zk.get(core.privatePath).then(
      (node) => {
        if (node.stat.czxid !== core.nodes.ownedCzxid) forced();
      },
      (error: unknown) => {
        // Only a lost connection or an ended session say nothing about privateLock here; any other
        // failure to read it (NONODE, but also SESSIONMOVED) counts as the forced release it may be.
        const zkError = toZkError(error);
        if (!zkError.connectionLost && !zkError.sessionGone) forced();
      },
    );
  }
}
