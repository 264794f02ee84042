import type { LockAcquisition, LockHome } from '../lock-acquisition.js';
import { LockUnavailableError } from '../lock-errors.js';
import { prefixFor, rankOf } from '../queue-order.js';
import { QueueLoop } from './cohort-queue-loop.js';
import { PRIVATE_LOCK } from './znode-names.js';
import { decideHandOver } from './handover-policy.js';
import type { Link } from './connection.js';

/**
 * One document's lock in this process: the local queue of its requests, and the ZooKeeper side
 * of holding it for them. The process takes the ZooKeeper lock once and passes it from local
 * holder to local holder within the hand-over bounds (handover-policy.ts), keeps it a moment
 * after the last one when it is wanted again soon (lingering), and gives it back with one verb,
 * `giveBack` (cohort-ownership.ts). The parts it is built from, each in its file: the transition
 * table (cohort-states.ts), what of ours is in ZooKeeper (cohort-nodes.ts), reconciliation after
 * a lost reply (cohort-recovery.ts), ownership and release (cohort-ownership.ts) and the queue
 * loop (cohort-queue-loop.ts).
 */
export class DocumentLock extends QueueLoop implements LockHome {
  get waiting(): number {
    return this.waiters.size;
  }

  localWaiters(): readonly LockAcquisition[] {
    return this.waiters.values();
  }

  // ---- requests of this process -------------------------------------------------------------

  arrive(member: LockAcquisition): void {
    member.home = this;
    member.arrival = ++this.arrivals;
    member.queuePositionOnArrival = this.waiters.ahead(member.priority) + (this.holder === null ? 0 : 1);
    this.waiters.push(member);
    if (this.state === 'idle') this.resumeFromIdle();
    else if (this.state === 'held') this.watchForeignQueue();
    else if (this.state === 'queued' && this.bestRank() < this.nodes.entryRank) this.wake('poked');
  }

  withdraw(member: LockAcquisition): Promise<void> | undefined {
    if (!this.waiters.remove(member)) return undefined;
    if (this.waiters.size > 0 || this.holder !== null) {
      if (this.state === 'queued' && this.bestRank() > this.nodes.entryRank) this.wake('poked');
      return undefined;
    }
    // The last request here gave up: the loop leaves the queue; the caller may wait for that.
    this.wake('poked');
    return this.whenFinished();
  }

  /** Starts taking the ZooKeeper lock for the queued requests. */
  begin(): void {
    void this.acquireLoop(this.ctx.contention.contended(this.docPath) ? 'enterQueue' : 'fastPath');
  }

  // ---- LockHome -------------------------------------------------------------------------------

  async release(member: LockAcquisition, handOver: boolean): Promise<void> {
    if (member !== this.holder) return;
    this.holder = null;
    if (this.state === 'released' || this.state === 'releasing') return;
    if (this.state === 'lost') return this.giveBack('dropLost');
    if (this.waiters.size === 0) return this.lingerOrRelease(handOver);
    return this.passOn(handOver);
  }

  /**
   * The common end of a bulk's key — held, nobody else here wants it, not worth keeping — gives
   * the lock back without a promise; any other goes the way `release` goes.
   */
  releaseInBackground(member: LockAcquisition): void {
    if (member === this.holder && this.state === 'held' && this.waiters.size === 0 && this.lingerLink(true) === null) {
      this.holder = null;
      this.finishInBackground();
      return;
    }
    void this.release(member, true);
  }

  /** The next local request takes the lock now, or the lock goes back to ZooKeeper's queue first. */
  private passOn(handOver: boolean): Promise<void> | undefined {
    const next = this.waiters.peek();
    if (next === undefined) return undefined;
    const now = Date.now();
    const foreign = this.foreignQueue();
    this.handOverWindow.catchUp(foreign);
    const decision = decideHandOver(
      {
        handOverAllowed: handOver,
        nextRank: rankOf(prefixFor(next.priority, this.ctx.prefixes), this.ctx.prefixes),
        foreign,
        handOvers: this.handOverWindow.count,
        msInWindow: this.handOverWindow.msSinceStart(now),
      },
      this.ctx.bounds,
    );
    if (decision === 'yield') return this.giveBack('requeue');
    this.handOverWindow.record(now);
    if (this.handOverWindow.halfUsed(now, this.ctx.bounds)) this.lookAtQueueAgain();
    this.waiters.shift();
    this.grantTo(next, true);
    return undefined;
  }

  /**
   * Nobody here wants the lock now. Keeping it a moment (lock lingering, as a biased lock does)
   * saves the release and the next acquisition — two ZooKeeper commits — when this process wants
   * the document again soon; another process's entry ends the wait at once. Not for a bulk's keys,
   * which would need a child watch each.
   */
  private lingerOrRelease(handOver: boolean): Promise<void> {
    const link = this.lingerLink(handOver);
    if (link === null) return this.giveBack('finish');
    this.apply('linger');
    this.lingerTimer = setTimeout(() => void this.giveBack('endLinger'), this.ctx.lingerMs);
    this.foreign.watch(link.zk);
    return Promise.resolve();
  }

  /** The link to keep the lock on a moment, when it is worth keeping; null: give it back now. */
  private lingerLink(handOver: boolean): Link | null {
    const worthKeeping = handOver && this.ctx.lingerMs > 0 && this.wantedAgain() && this.mayLinger && this.nobodyElseQueued();
    if (!worthKeeping) return null;
    const link = this.ctx.connection.current();
    return link === null || link.generation !== this.generation ? null : link;
  }

  /** A request of this process arrived while the lock lingered: it is a local hand-over. */
  private resumeFromIdle(): void {
    this.apply('resume');
    void this.passOn(true);
  }

  protected foreignQueueChanged(): void {
    if (this.state === 'idle' && !this.nobodyElseQueued()) void this.giveBack('endLinger');
  }

  /** privateLock may be ours now: held, or a create (or transaction) of ours that makes it may be on its way or unanswered. */
  mayHoldPrivateLock(): boolean {
    return this.nodes.ownsPrivateLock || this.nodes.uncertain || this.state === 'fastPath' || this.state === 'arbitrating' || this.state === 'recovering';
  }

  /** The node `name` of our document (privateLock or a queue entry) is ours as far as we know. */
  knowsNode(name: string): boolean {
    return name === PRIVATE_LOCK ? this.nodes.ownsPrivateLock : name === this.nodes.entry;
  }

  linkUp(): boolean {
    return this.ctx.connection.linkUp(this.generation);
  }

  async whenLinkUp(signal: AbortSignal): Promise<void> {
    const link = await this.ctx.connection.whenConnected(signal);
    if (link !== null) return;
    signal.throwIfAborted();
    throw new LockUnavailableError('lock engine closed');
  }

  // ---- session events (from the engine) -----------------------------------------------------

  /** The session ended (or the engine closes): its nodes are gone; waiters fail with `error`. */
  end(error: Error, reason: string): void {
    const holder = this.holder;
    this.toReleased();
    if (holder?.markLost(reason) === true) this.ctx.events.lost({ key: this.key, reason });
    for (const member of this.waiters.drain()) member.group.fail(member, error);
    this.wake('poked');
  }

  // ---- batch acquisition (batch-acquire.ts) --------------------------------------------------

  /** Fills privateLock's data for a batch transaction. */
  lockData(): string {
    return this.nodeData();
  }

  /**
   * The batch transaction created our privateLock (`czxid`), and the document node when
   * `createdDocument`; `children`: the document's as read before it. `mayLinger`: a single
   * acquisition's grant (a bulk's keys do not linger: a child watch each). Arguments, not an
   * object: a bulk's keys are granted by the thousand.
   */
  grantedInBatch(czxid: number, docVersion: number, createdDocument: boolean, children: readonly string[], mayLinger: boolean): void {
    this.nodes.owns(czxid, docVersion);
    this.nodes.observed(children, docVersion);
    this.mayLinger = mayLinger;
    this.nodes.createdDocument = createdDocument;
    this.positioned = true;
    if (this.waiters.size === 0) {
      void this.giveBack('finish');
      return;
    }
    if (this.placeNeedsFreshQueue()) void this.acquireLoop('held');
    else this.toHeld();
  }

  /** The batch found the key taken or queued: wait in the queue like a single acquisition. */
  contendedInBatch(): void {
    this.ctx.contention.mark(this.docPath);
    void this.acquireLoop('enterQueue');
  }

  /** The batch transaction's outcome is unknown: find out what is ours first. */
  unknownInBatch(): void {
    this.nodes.uncertain = true;
    void this.acquireLoop('recover');
  }

  // ---- holding ---------------------------------------------------------------------------------

  protected toHeld(): void {
    this.apply('grant');
    const grantedAt = Date.now();
    this.reapedRetries = 0;
    // A forced release already seen may be newer than a create whose answer came only now.
    this.forcedReleaseSeen(this.ctx.forcedEpoch.latestForcedZxid());
    this.watchPrivateLock();
    this.startGrant(grantedAt, this.nodes.children);
    const first = this.waiters.shift();
    if (first === undefined) {
      void this.giveBack('finish');
      return;
    }
    this.grantTo(first, false);
  }

  private grantTo(member: LockAcquisition, local: boolean): void {
    this.holder = member;
    if (local) {
      this.handedOverHere = true;
      // A bulk's key has no holder watch; the request it is handed on to gets one.
      this.watchPrivateLock(true);
    }
    member.grant({ queuePosition: member.queuePositionOnArrival, handedOverLocally: local, fencingToken: this.nodes.ownedCzxid ?? 0 }, Date.now());
    if (this.waiters.size > 0) this.watchForeignQueue();
  }

  /** Half the hand-over window is used: a fresh look at an empty queue lets the next hand-overs go on without a ZooKeeper commit. */
  private lookAtQueueAgain(): void {
    const link = this.ctx.connection.current();
    if (link === null || link.generation !== this.generation) return;
    this.foreign.refresh(link.zk);
  }

  /** While held with local waiters: see other processes' entries, for the hand-over bound. */
  private watchForeignQueue(): void {
    if (this.state !== 'held') return;
    const link = this.ctx.connection.current();
    if (link === null || link.generation !== this.generation) return;
    this.foreign.watch(link.zk);
  }
}
