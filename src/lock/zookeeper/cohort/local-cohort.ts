import { LocalQueue } from '../../local-queue.js';
import type { LockAcquisition } from '../../lock-acquisition.js';
import type { Priority } from '../../lock-engine.js';
import { encodeRequestNodeData } from '../../lock-node-data.js';
import { prefixFor, rankOf } from '../../queue-order.js';
import type { Link } from '../session/connection.js';
import type { CohortCore } from '../cohort-core.js';
import { mustReadQueueAgain, type PlacingRead } from '../cohort-decisions.js';
import type { GiveBack } from '../cohort-states.js';
import { ForeignQueueWatch, UNKNOWN_FOREIGN_QUEUE, foreignQueueOf } from './foreign-queue-watch.js';
import { type ForeignQueue, HandOverWindow, decideHandOver } from './handover-policy.js';
import type { WakeReason } from '../queue/wake-up.js';

const RANK_PRIORITY: readonly Priority[] = ['foreground', 'background'];

/** The queue entry prefix of `rank` (0 foreground, 1 background). */
export function prefixOfRank(rank: number, core: CohortCore): string {
  return prefixFor(RANK_PRIORITY[rank] ?? 'background', core.ctx.prefixes);
}

/** What the local cohort asks of the document lock that holds it: the other parts' verbs. */
export interface LocalCohortHost {
  /** Gives the lock back (cohort-ownership.ts). */
  giveBack(how: GiveBack): Promise<void>;
  /** `giveBack('finish')` for a holder nobody waits on, without a promise. */
  finishInBackground(): void;
  /** Watches privateLock for the request a lock is handed on to here, if no watch guards it yet (cohort-ownership.ts). */
  watchHandedOnLock(): void;
  /** Wakes the acquisition loop (cohort-queue-loop.ts). */
  wake(reason: WakeReason): void;
  /** The document node was seen deleted while the lock was held here: the lock is lost (cohort-ownership.ts). */
  documentGone(): void;
}

/**
 * This process's requests for one document (the local cohort of lock cohorting): their arrival
 * and withdrawal, the holder, the local hand-over within its bounds (handover-policy.ts) and the
 * other processes' queue it watches for them, lingering after the last one, and what the local
 * requests tell the ZooKeeper side (the best rank, the node data, a late arrival).
 */
export class LocalCohort {
  private readonly core: CohortCore;
  private readonly host: LocalCohortHost;
  private readonly waiters = new LocalQueue<LockAcquisition>();
  private holding: LockAcquisition | null = null;
  /** Local requests seen so far (each one's `arrival`). */
  private arrivals = 0;
  /** The read of the queue that places the coming grant, as it went out. */
  private placingRead: PlacingRead = { arrivals: 0, priority: 'background' };
  /** Granted to a single acquisition (not a bulk's key): may linger after its last local release. */
  private lingerAllowed = true;
  /** The waiters learnt their place in the ZooKeeper queue. */
  private positioned = false;
  /** The lock was passed from one request of this process to the next at least once. */
  private handedOverHere = false;
  /** Ms since this process last released the document, as the recent releases remember it (Infinity: not within their window). */
  private readonly releasedAgoMs: number;
  private lingerTimer: NodeJS.Timeout | null = null;
  private handOverPart: HandOverWindow | null = null;
  /** When the latest ZooKeeper grant came (the hand-over window starts there when first needed). */
  private grantedAt = 0;
  private foreignPart: ForeignQueueWatch | null = null;
  /** Other processes' queue as the latest grant's own read showed it, until a watch takes over. */
  private foreignAtGrant: ForeignQueue = UNKNOWN_FOREIGN_QUEUE;

  constructor(core: CohortCore, host: LocalCohortHost) {
    this.core = core;
    this.host = host;
    this.releasedAgoMs = core.ctx.recentReleases.releasedAgoMs(core.docPath);
  }

  // The parts below are made on first use: most locks (a bulk's keys, a lone write's) never wait
  // or hand over, and every object a lock carries is copied by each young-generation collection
  // while the lock is held.

  /** Local hand-overs the bound counts (handover-policy.ts), from the latest grant on. */
  private get handOverWindow(): HandOverWindow {
    if (this.handOverPart === null) {
      this.handOverPart = new HandOverWindow();
      this.handOverPart.restart(this.grantedAt);
    }
    return this.handOverPart;
  }

  /** Other processes' queue entries, watched while local requests wait for a hand-over. */
  private get foreign(): ForeignQueueWatch {
    const core = this.core;
    return (this.foreignPart ??= new ForeignQueueWatch(
      {
        docPath: core.docPath,
        prefixes: core.ctx.prefixes,
        incarnation: () => core.incarnation,
        ownEntry: () => core.nodes.entry,
        stillWanted: () => core.state === 'held' && this.waiters.size > 0,
        changed: () => this.foreignQueueChanged(),
        documentGone: () => this.host.documentGone(),
      },
      this.foreignAtGrant,
    ));
  }

  get holder(): LockAcquisition | null {
    return this.holding;
  }

  get waiting(): number {
    return this.waiters.size;
  }

  values(): readonly LockAcquisition[] {
    return this.waiters.values();
  }

  /** Granted to a single acquisition (not a bulk's key): may linger after its last local release. */
  get mayLinger(): boolean {
    return this.lingerAllowed;
  }

  // ---- requests of this process -------------------------------------------------------------

  arrive(member: LockAcquisition): void {
    const core = this.core;
    member.arrival = ++this.arrivals;
    member.queuePositionOnArrival = this.waiters.ahead(member.priority) + (this.holding === null ? 0 : 1);
    this.waiters.push(member);
    if (core.state === 'idle') this.resumeFromIdle();
    else if (core.state === 'held') this.watchForeignQueue();
    else if (core.state === 'queued' && this.bestRank() < core.nodes.entryRank) this.host.wake('poked');
  }

  withdraw(member: LockAcquisition): Promise<void> | undefined {
    const core = this.core;
    if (!this.waiters.remove(member)) return undefined;
    if (this.waiters.size > 0 || this.holding !== null) {
      if (core.state === 'queued' && this.bestRank() > core.nodes.entryRank) this.host.wake('poked');
      return undefined;
    }
    // The last request here gave up: the loop leaves the queue; the caller may wait for that.
    this.host.wake('poked');
    return core.whenFinished();
  }

  async release(member: LockAcquisition, handOver: boolean): Promise<void> {
    if (member !== this.holding) return;
    this.holding = null;
    const state = this.core.state;
    if (state === 'released' || state === 'releasing') return;
    if (state === 'lost') return this.host.giveBack('dropLost');
    if (this.waiters.size === 0) return this.lingerOrRelease(handOver);
    return this.passOn(handOver);
  }

  /**
   * The common end of a bulk's key — held, nobody else here wants it, not worth keeping — gives
   * the lock back without a promise; any other goes the way `release` goes.
   */
  releaseInBackground(member: LockAcquisition): void {
    if (member === this.holding && this.core.state === 'held' && this.waiters.size === 0 && this.lingerLink(true) === null) {
      this.holding = null;
      this.host.finishInBackground();
      return;
    }
    void this.release(member, true);
  }

  /** The next local request takes the lock now, or the lock goes back to ZooKeeper's queue first. */
  private passOn(handOver: boolean): Promise<void> | undefined {
    const next = this.waiters.peek();
    if (next === undefined) return undefined;
    const ctx = this.core.ctx;
    const now = Date.now();
    const foreign = this.foreignQueue();
    this.handOverWindow.catchUp(foreign);
    const decision = decideHandOver(
      {
        handOverAllowed: handOver,
        nextRank: rankOf(prefixFor(next.priority, ctx.prefixes), ctx.prefixes),
        foreign,
        handOvers: this.handOverWindow.count,
        msInWindow: this.handOverWindow.msSinceStart(now),
      },
      ctx.bounds,
    );
    if (decision === 'yield') return this.host.giveBack('requeue');
    this.handOverWindow.record(now);
    if (this.handOverWindow.halfUsed(now, ctx.bounds)) this.lookAtQueueAgain();
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
    if (link === null) return this.host.giveBack('finish');
    this.core.apply('linger');
    this.lingerTimer = setTimeout(() => void this.host.giveBack('lingerEnded'), this.core.ctx.lingerMs);
    this.foreign.watch(link.zk);
    return Promise.resolve();
  }

  /** The link to keep the lock on a moment, when it is worth keeping; null: give it back now. */
  private lingerLink(handOver: boolean): Link | null {
    const worthKeeping = handOver && this.core.ctx.lingerMs > 0 && this.wantedAgain() && this.lingerAllowed && this.nobodyElseQueued();
    if (!worthKeeping) return null;
    return this.core.currentLink();
  }

  /** A request of this process arrived while the lock lingered: it is a local hand-over. */
  private resumeFromIdle(): void {
    this.core.apply('resume');
    void this.passOn(true);
  }

  /** Other processes' queue for this document changed, as the child watch saw it. */
  private foreignQueueChanged(): void {
    if (this.core.state === 'idle' && !this.nobodyElseQueued()) void this.host.giveBack('lingerEnded');
  }

  stopLingerTimer(): void {
    if (this.lingerTimer === null) return;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
  }

  /** This process wants the document again and again: a local hand-over, or back within the linger window. */
  private wantedAgain(): boolean {
    return this.handedOverHere || this.releasedAgoMs <= this.core.ctx.lingerMs;
  }

  /** A local hand-over, or back within the recent releases' window (a second, or the linger window when longer). */
  writtenAgain(): boolean {
    return this.handedOverHere || this.releasedAgoMs < Number.POSITIVE_INFINITY;
  }

  // ---- the ZooKeeper grant -------------------------------------------------------------------

  /**
   * A ZooKeeper grant (the move to `held` is made): a new hand-over window and foreign queue, with
   * the children read in the grant's own round trip; the first local request holds the lock.
   */
  granted(now: number): void {
    this.startGrant(now, this.core.nodes.children);
    const first = this.waiters.shift();
    if (first === undefined) {
      void this.host.giveBack('finish');
      return;
    }
    this.grantTo(first, false);
  }

  private startGrant(now: number, children: readonly string[]): void {
    this.grantedAt = now;
    this.handOverPart?.restart(now);
    const queue = foreignQueueOf(children, this.core.nodes.entry, this.core.ctx.prefixes, false);
    if (this.foreignPart !== null) this.foreignPart.granted(queue);
    else this.foreignAtGrant = queue;
  }

  private grantTo(member: LockAcquisition, local: boolean): void {
    this.holding = member;
    if (local) this.handedOverHere = true;
    // A bulk's key has no holder watch; the single request it is handed on to gets one, and so does
    // one its batch grant serves first (a no-op for a lock watched already).
    if (local || member.group.single) this.host.watchHandedOnLock();
    member.grant({ queuePosition: member.queuePositionOnArrival, handedOverLocally: local, fencingToken: this.core.nodes.ownedCzxid ?? 0 }, Date.now());
    if (this.waiters.size > 0) this.watchForeignQueue();
  }

  /** A batch transaction granted the lock: the waiters' place is known; `mayLinger`: a single acquisition's grant. */
  grantedInBatch(mayLinger: boolean): void {
    this.lingerAllowed = mayLinger;
    this.positioned = true;
  }

  /** Half the hand-over window is used: a fresh look at an empty queue lets the next hand-overs go on without a ZooKeeper commit. */
  private lookAtQueueAgain(): void {
    const link = this.core.currentLink();
    if (link === null) return;
    this.foreign.refresh(link.zk);
  }

  /** While held with local waiters: see other processes' entries, for the hand-over bound. */
  private watchForeignQueue(): void {
    if (this.core.state !== 'held') return;
    const link = this.core.currentLink();
    if (link === null) return;
    this.foreign.watch(link.zk);
  }

  /** Other processes' queue for this document, as last read or watched. */
  private foreignQueue(): ForeignQueue {
    return this.foreignPart?.queue ?? this.foreignAtGrant;
  }

  /** Other processes' queue for this document, as last read or watched: known, and empty. */
  nobodyElseQueued(): boolean {
    const queue = this.foreignQueue();
    return queue.known && queue.count === 0;
  }

  // ---- what the local requests tell the ZooKeeper side --------------------------------------

  /** Rank of the best local request (the holder's when nobody waits): 0 foreground, 1 background. */
  bestRank(): number {
    const best = this.waiters.best() ?? this.holding?.priority ?? 'background';
    return best === 'foreground' ? 0 : 1;
  }

  /** The data of a node we create: the first local request's, with our guid and entry. */
  nodeData(): string {
    const first = this.waiters.peek() ?? this.holding;
    return encodeRequestNodeData(first?.group.request ?? null, {
      guid: this.core.guid,
      priority: first?.priority ?? null,
      acquiredAt: Date.now(),
      entry: this.core.nodes.entry,
    });
  }

  /** The read of the queue that places the coming grant goes out now. */
  queueRead(): void {
    this.placingRead = { arrivals: this.arrivals, priority: this.bestRank() === 0 ? 'foreground' : 'background' };
  }

  /**
   * The answer of a read sent earlier (`queueRead`) is judged now, for the best local request —
   * maybe one that came while the read was on its way. Returns that request's rank; judged for a
   * foreground request, the read placed foreground (cohort-decisions.ts), whatever waited at its send.
   */
  judgeQueueRead(): number {
    const rank = this.bestRank();
    if (rank === 0) this.placingRead = { arrivals: this.placingRead.arrivals, priority: 'foreground' };
    return rank;
  }

  /** The read that placed us cannot place the request about to be served: only a fresh read can say it may be (cohort-decisions.ts). */
  placeNeedsFreshQueue(): boolean {
    return mustReadQueueAgain(this.waiters.peek(), this.placingRead);
  }

  /** The first time the ZooKeeper queue is seen, the waiters learn how many were ahead there. */
  notePositions(zkAhead: number): void {
    if (this.positioned) return;
    this.positioned = true;
    for (const member of this.waiters.values()) member.queuePositionOnArrival += zkAhead;
  }

  // ---- the end -------------------------------------------------------------------------------

  /** The holder (as it was, when given) loses the lock: told, and the engine's events say so. */
  holderLost(reason: string, holder: LockAcquisition | null = this.holding): void {
    if (holder?.markLost(reason) === true) this.core.ctx.events.lost({ key: this.core.key, reason });
  }

  /** Every waiting request fails with `error`. */
  failWaiters(error: Error): void {
    for (const member of this.waiters.drain()) member.group.fail(member, error);
  }

  /** Takes every waiting request out (they start over elsewhere). */
  drainWaiters(): LockAcquisition[] {
    return this.waiters.drain();
  }
}
