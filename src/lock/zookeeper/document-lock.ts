import { randomUUID } from 'node:crypto';
import { LocalQueue } from '../local-queue.js';
import type { LockAcquisition, LockHome } from '../lock-acquisition.js';
import type { LockKey, Priority } from '../lock-engine.js';
import { LockUnavailableError } from '../lock-errors.js';
import { encodeNodeData } from '../lock-node-data.js';
import { parseEntryName, prefixFor, queueFromChildren, rankOf } from '../queue-order.js';
import { ZK_RC, ZkError, toZkError } from '../../zookeeper/zk-errors.js';
import { PRIVATE_LOCK, indexPath } from './znode-names.js';
import type { Link } from './connection.js';
import { type ParentNode, parentChain } from './containers.js';
import type { EngineContext } from './engine-context.js';
import { type FastPathPlan, type FastPathResult, fastPath, fusedFastPath } from './fast-path.js';
import { ForeignQueueWatch } from './foreign-queue.js';
import { decideHandOver } from './handover-policy.js';
import { HolderWatch } from './holder-watch.js';
import { arbitrate, enterQueue, lastSegment, readQueue, viewQueue } from './queue-wait.js';
import { RECONCILE_UNKNOWN_WARN_AFTER, type ReconcileResult, type Reconciled, reconcile, reconcilePauseMs } from './recovery.js';
import { type OwnedLock, type PendingRelease, type ReleasePace, opsOf } from './release-batcher.js';
import { type Failure, type Unread, classifyFailure as classify } from './round-trip.js';
import { type WakeReason, WakeUp } from './wake-up.js';
import { type CohortEvent, type CohortState, nextTransition, transitionOf } from './cohort-states.js';


/** The steps of the acquisition loop (Curator's LockInternals loop, with the fast path in front). */
type Step = 'fastPath' | 'enterQueue' | 'readQueue' | 'evaluate' | 'arbitrate' | 'rerank' | 'recover' | 'held' | 'leave' | 'stop';

/**
 * Identifies one document lock's nodes (recovery after a lost reply, forced releases): unique
 * across processes by the random part, within the process by the counter. One `randomUUID` per
 * document lock was 4% of a bulk's allocations.
 */
const PROCESS_GUID = randomUUID();
let guidsIssued = 0;
function nextGuid(): string {
  guidsIssued++;
  return `${PROCESS_GUID}-${guidsIssued.toString(36)}`;
}

/** Round trips that found the document reaped under them, in a row, before giving up. */
const MAX_REAPED_RETRIES = 5;

const RANK_PRIORITY: readonly Priority[] = ['foreground', 'background'];

/**
 * Operations of the yield transaction that, refused, prove privateLock is not ours any more:
 * privateLock's own delete. The others prove nothing about it — the document's version check (a
 * forced release of the holder before us, between our read of the version and our create, bumps
 * it too), the epoch check (a forced release, maybe of another document) and the delete of our
 * old entry (deleted by hand) — and the release verifies before deleting.
 */
const YIELD_LOCK_GONE_OPS: ReadonlySet<number> = new Set([3]);

/**
 * One document's lock in this process: the local queue of its requests, and the ZooKeeper side
 * of holding it for them. The process takes the ZooKeeper lock once and passes it from local
 * holder to local holder within the hand-over bounds; see handover-policy.ts.
 */
export class DocumentLock implements LockHome {
  readonly key: LockKey;
  readonly docPath: string;
  readonly guid = nextGuid();
  state: CohortState = 'fastPath';
  private readonly privatePath: string;
  private readonly ctx: EngineContext;
  private readonly waiters = new LocalQueue<LockAcquisition>();
  holder: LockAcquisition | null = null;
  /** Session generation our nodes belong to. */
  generation: number;
  private entry: string | null = null;
  private entryRank = Number.POSITIVE_INFINITY;
  private ownsPrivateLock = false;
  /** czxid of our privateLock; null when we own none or its create was not answered. */
  private ownedCzxid: number | null = null;
  private docVersion = 0;
  /** The forced-release epoch known before our latest privateLock create was issued. */
  private epochAtCreate = 0;
  /** The transaction that granted our privateLock created the document container (see `deletesDocument`). */
  private createdDocument = false;
  private privateLockGone = false;
  /** The watch on the privateLock we hold (its czxid's), for a single acquisition's grant. */
  private holderWatch: HolderWatch | null = null;
  /** A create (or transaction) of ours may have been applied without us seeing the answer. */
  private uncertain = false;
  /** Reconciliations in a row whose reads left the outcome unknown (paces the next one). */
  private unknownReconciles = 0;
  private children: readonly string[] = [];
  private grantedAt = 0;
  private handOvers = 0;
  private readonly foreign: ForeignQueueWatch;
  private incarnation = 0;
  /** Granted to a single acquisition (not a bulk's key): may linger after its last local release. */
  private mayLinger = true;
  private positioned = false;
  private reapedRetries = 0;
  private readonly wakeUp = new WakeUp();
  private lingerTimer: NodeJS.Timeout | null = null;
  /** Ms since this process last released the document, as the recent releases remember it (Infinity: not within their window). */
  private readonly releasedAgoMs: number;
  /** The lock was passed from one request of this process to the next at least once. */
  private handedOverHere = false;
  private finished: { readonly promise: Promise<void>; readonly resolve: () => void } | null = null;

  /** `docPath`: `documentPath(ctx.root, key)`, which the engine has just computed to look the lock up. */
  constructor(ctx: EngineContext, key: LockKey, docPath: string) {
    this.ctx = ctx;
    this.key = { index: key.index, id: key.id };
    this.docPath = docPath;
    this.privatePath = `${this.docPath}/${PRIVATE_LOCK}`;
    this.generation = ctx.connection.generation();
    this.releasedAgoMs = ctx.recentReleases.releasedAgoMs(this.docPath);
    this.foreign = new ForeignQueueWatch({
      docPath: this.docPath,
      prefixes: ctx.prefixes,
      incarnation: () => this.incarnation,
      ownEntry: () => this.entry,
      stillWanted: () => this.state === 'held' && this.waiters.size > 0,
      changed: () => this.foreignQueueChanged(),
    });
  }

  /** Every node the document node needs first: wanted only by the paths that create it one by one. */
  private parents(): readonly ParentNode[] {
    return parentChain(this.ctx.root, indexPath(this.ctx.root, this.key.index), this.docPath);
  }

  get waiting(): number {
    return this.waiters.size;
  }

  localWaiters(): readonly LockAcquisition[] {
    return this.waiters.values();
  }

  // ---- requests of this process -------------------------------------------------------------

  arrive(member: LockAcquisition): void {
    member.home = this;
    member.queuePositionOnArrival = this.waiters.ahead(member.priority) + (this.holder === null ? 0 : 1);
    this.waiters.push(member);
    if (this.state === 'idle') this.resumeFromIdle();
    else if (this.state === 'held') this.watchForeignQueue();
    else if (this.state === 'queued' && this.bestRank() < this.entryRank) this.wake('poked');
  }

  withdraw(member: LockAcquisition): Promise<void> | undefined {
    if (!this.waiters.remove(member)) return undefined;
    if (this.waiters.size > 0 || this.holder !== null) {
      if (this.state === 'queued' && this.bestRank() > this.entryRank) this.wake('poked');
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
    if (this.state === 'lost') return this.relinquish();
    if (this.waiters.size === 0) return this.lingerOrRelease(handOver);
    return this.passOn(handOver);
  }

  /** The next local request takes the lock now, or the lock goes back to ZooKeeper's queue first. */
  private passOn(handOver: boolean): Promise<void> | undefined {
    const next = this.waiters.peek();
    if (next === undefined) return undefined;
    const decision = decideHandOver(
      {
        handOverAllowed: handOver,
        nextRank: rankOf(prefixFor(next.priority, this.ctx.prefixes), this.ctx.prefixes),
        foreign: this.foreign.queue,
        handOvers: this.handOvers,
        msSinceGrant: Date.now() - this.grantedAt,
      },
      this.ctx.bounds,
    );
    if (decision === 'yield') return this.yieldLock();
    if (decision === 'handOverAndReset') {
      this.handOvers = 0;
      this.grantedAt = Date.now();
    }
    this.handOvers++;
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
    const link = this.ctx.connection.current();
    const worthKeeping = handOver && this.ctx.lingerMs > 0 && this.wantedAgain() && this.mayLinger && this.nobodyElseQueued();
    if (!worthKeeping || link === null || link.generation !== this.generation) return this.releaseLock();
    this.apply('linger');
    this.lingerTimer = setTimeout(() => this.stopLingering(), this.ctx.lingerMs);
    this.foreign.watch(link.zk);
    return Promise.resolve();
  }

  /** A request of this process arrived while the lock lingered: it is a local hand-over. */
  private resumeFromIdle(): void {
    this.apply('resume');
    void this.passOn(true);
  }

  /** Ends lingering (timer, engine closing, another process queued): the ordinary release. */
  stopLingering(): void {
    if (transitionOf(this.state, 'lingerEnded') === undefined) return;
    this.apply('lingerEnded');
    void this.releaseLock();
  }

  private foreignQueueChanged(): void {
    if (this.state === 'idle' && !this.nobodyElseQueued()) this.stopLingering();
  }

  /** Other processes' queue for this document, as last read or watched: known, and empty. */
  private nobodyElseQueued(): boolean {
    const queue = this.foreign.queue;
    return queue.known && queue.count === 0;
  }

  private clearLingerTimer(): void {
    if (this.lingerTimer === null) return;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
  }

  /** privateLock may be ours now: held, or a create (or transaction) of ours that makes it may be on its way or unanswered. */
  mayHoldPrivateLock(): boolean {
    return this.ownsPrivateLock || this.uncertain || this.state === 'fastPath' || this.state === 'arbitrating' || this.state === 'recovering';
  }

  /** The node `name` of our document (privateLock or a queue entry) is ours as far as we know. */
  knowsNode(name: string): boolean {
    return name === PRIVATE_LOCK ? this.ownsPrivateLock : name === this.entry;
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

  /** The link was silent past the safety margin: stop vouching, but keep privateLock while its write may still run. */
  marginExceeded(generation: number): void {
    if (this.generation <= generation) this.toLost('ZooKeeper connection suspended past the safety margin');
  }

  /** The session ended (or the engine closes): its nodes are gone; waiters fail with `error`. */
  end(error: Error, reason: string): void {
    const holder = this.holder;
    this.toReleased();
    if (holder?.markLost(reason) === true) this.ctx.events.lost({ key: this.key, reason });
    for (const member of this.waiters.drain()) member.group.fail(member, error);
    this.wake('poked');
  }

  /** An operator force-released our privateLock through this process. */
  forcedHere(): void {
    // The answer may come after this lock gave privateLock up (a yield): nothing of ours is gone then.
    if (!this.ownsPrivateLock) return;
    this.privateLockGone = true;
    this.toLost('forced release by an operator');
  }

  // ---- batch acquisition (batch-acquire.ts) --------------------------------------------------

  /** Fills privateLock's data for a batch transaction. */
  lockData(): string {
    return this.nodeData();
  }

  /**
   * Call right before a privateLock create is issued: the epoch known now is at most the one at
   * the create, so a release checking against it is refused after any later forced release.
   */
  beforeCreate(): void {
    this.epochAtCreate = this.ctx.forcedEpoch.known();
  }

  grantedInBatch(grant: {
    readonly czxid: number;
    readonly docVersion: number;
    readonly createdDocument: boolean;
    readonly children: readonly string[];
    /** A single acquisition's grant (a bulk's keys do not linger: a child watch each). */
    readonly mayLinger: boolean;
  }): void {
    this.owns(grant.czxid, grant.docVersion);
    this.observed(grant.children, grant.docVersion);
    this.mayLinger = grant.mayLinger;
    this.createdDocument = grant.createdDocument;
    this.positioned = true;
    if (this.waiters.size === 0) {
      void this.leave();
      return;
    }
    this.toHeld();
  }

  /** The batch found the key taken or queued: wait in the queue like a single acquisition. */
  contendedInBatch(): void {
    this.ctx.contention.mark(this.docPath);
    void this.acquireLoop('enterQueue');
  }

  /** The batch transaction's outcome is unknown: find out what is ours first. */
  unknownInBatch(): void {
    this.uncertain = true;
    void this.acquireLoop('recover');
  }

  // ---- the acquisition loop ------------------------------------------------------------------

  private async acquireLoop(first: Step): Promise<void> {
    let step = first;
    try {
      while (step !== 'stop') {
        if (this.state === 'released') return;
        const nobodyWaits = this.waiters.size === 0 || this.ctx.connection.state() === 'closed';
        if (nobodyWaits && step !== 'recover' && step !== 'leave' && step !== 'held') step = 'leave';
        step = await this.run(step);
      }
    } catch (error) {
      this.ctx.logger.error({ err: error, key: this.key }, 'lock acquisition failed');
      const failure = new LockUnavailableError(`ZooKeeper error while acquiring ${this.key.index}/${this.key.id}`, { cause: error });
      for (const member of this.waiters.drain()) member.group.fail(member, failure);
      await this.leave();
      // The failed request may have been applied after all (its answer misreported): look for what it left.
      void this.ctx.orphans.sweep();
    }
  }

  private run(step: Exclude<Step, 'stop'>): Promise<Step> {
    switch (step) {
      case 'fastPath':
        return this.tryFastPath();
      case 'enterQueue':
        return this.enterQueue();
      case 'readQueue':
        return this.readQueue();
      case 'evaluate':
        return this.evaluate();
      case 'arbitrate':
        return this.arbitrate();
      case 'rerank':
        return this.rerank();
      case 'recover':
        return this.recover();
      case 'held':
        this.toHeld();
        return Promise.resolve('stop');
      case 'leave':
        return this.leave();
    }
  }

  private async tryFastPath(): Promise<Step> {
    const link = await this.link();
    if (link === null) return 'leave';
    this.apply('tryFastPath');
    this.beforeCreate();
    const plan = {
      docPath: this.docPath,
      privatePath: this.privatePath,
      parents: this.parents(),
      rank: this.bestRank(),
      data: this.nodeData(),
    };
    await this.releaseIssued();
    const release = this.ctx.releases.takeForFusion(this.docPath, link.generation);
    const result = release === null ? await this.plainFastPath(link, plan) : await this.fusedFastPath(link, plan, release);
    switch (result.kind) {
      case 'held':
      case 'preceded':
        this.owns(result.czxid, result.docVersion);
        this.observed(result.children, result.docVersion);
        if (result.kind === 'held') return 'held';
        this.ctx.contention.mark(this.docPath);
        await this.stepBack();
        return 'enterQueue';
      case 'contended':
        this.ctx.contention.mark(this.docPath);
        return 'enterQueue';
      case 'reaped':
        return this.retryReaped('fastPath');
      default:
        return this.afterFailure(result);
    }
  }

  /** Our previous lock's release of this document, when it waits for its verification: ordered before what we send. */
  private async releaseIssued(): Promise<void> {
    const issued = this.ctx.releases.issuedFor([this.docPath]);
    if (issued !== null) await issued;
  }

  private plainFastPath(link: Link, plan: FastPathPlan): Promise<FastPathResult> {
    this.ctx.releases.flushFor(this.docPath);
    return fastPath(link.zk, this.ctx.containers, this.ctx.prefixes, plan);
  }

  /**
   * This process released the document a moment ago and the release has not gone out yet: it
   * goes out in the same transaction as our create. Refused by one of its operations (an operator
   * force-released the old lock) → the release takes its ordinary way and so do we. Refused as a
   * whole request, or reply lost → the release is verified and sent again on its own (never
   * marked done unanswered: its privateLock would stay until the session ends), and we look at
   * what is ours before going on.
   */
  private async fusedFastPath(link: Link, plan: FastPathPlan, release: PendingRelease): Promise<FastPathResult> {
    const ops = opsOf(release.item, this.ctx.forcedEpoch).map(({ op }) => op);
    try {
      const result = await fusedFastPath(link.zk, this.ctx.prefixes, plan, { ops, entry: release.item.entry });
      if (result.kind === 'releaseRefused') {
        this.ctx.releases.resubmit(release);
        return await this.plainFastPath(link, plan);
      }
      if (result.kind === 'refusedWhole') {
        this.ctx.releases.afterUnknownOutcome(release, result.error);
        return { kind: 'unknown' };
      }
      if (result.kind === 'unknown') this.ctx.releases.afterUnknownOutcome(release, new ZkError(ZK_RC.CONNECTIONLOSS, 'fused release: reply lost'));
      // Applied with the transaction (`held`, `preceded`, `unread`), or the session ended with its nodes (`gone`).
      else release.done();
      return result;
    } catch (error) {
      this.ctx.releases.resubmit(release);
      throw error;
    }
  }

  private async enterQueue(): Promise<Step> {
    const link = await this.link();
    if (link === null) return 'leave';
    this.apply('enterQueue');
    await this.releaseIssued();
    this.ctx.releases.flushFor(this.docPath);
    const rank = this.bestRank();
    const result = await enterQueue(link.zk, this.ctx.containers, {
      docPath: this.docPath,
      parents: this.parents(),
      prefix: this.prefixOfRank(rank),
      data: this.nodeData(),
    });
    if (result.kind === 'queued') {
      this.entry = result.entry;
      this.entryRank = rank;
      this.observed(result.children, result.docVersion);
      return 'evaluate';
    }
    return result.kind === 'reaped' ? this.retryReaped('enterQueue') : this.afterFailure(result);
  }

  private async readQueue(): Promise<Step> {
    const link = await this.link();
    if (link === null) return 'leave';
    const result = await readQueue(link.zk, this.docPath);
    if (result.kind === 'read') {
      this.observed(result.children, result.docVersion);
      return 'evaluate';
    }
    if (result.kind === 'reaped') {
      this.entry = null;
      return this.retryReaped('enterQueue');
    }
    return this.afterFailure(result);
  }

  /** Where do we stand: head with privateLock free → arbitrate; otherwise wait for the one ahead. */
  private async evaluate(): Promise<Step> {
    this.apply('evaluate');
    if (this.entry === null) return 'enterQueue';
    const view = viewQueue(this.children, this.entry, this.ctx.prefixes);
    if (view.position < 0) {
      // Our entry was deleted under us while the session lives (an operator): queue again.
      this.entry = null;
      return 'enterQueue';
    }
    this.notePositions(view.ahead.length + (view.privateLockTaken ? 1 : 0));
    if (this.bestRank() !== this.entryRank) return 'rerank';
    if (view.ahead.length === 0 && !view.privateLockTaken) return 'arbitrate';
    const watched = view.ahead.length === 0 ? this.privatePath : `${this.docPath}/${view.ahead[view.ahead.length - 1]!.name}`;
    const woke = await this.waitOn(watched);
    if (woke === 'poked') return 'evaluate';
    // Speculate: at the head, or with one entry ahead that just went, the next round trip tries privateLock.
    return view.ahead.length <= 1 ? 'arbitrate' : 'readQueue';
  }

  private async arbitrate(): Promise<Step> {
    const link = await this.link();
    if (link === null) return 'leave';
    this.apply('arbitrate');
    this.beforeCreate();
    const result = await arbitrate(link.zk, {
      docPath: this.docPath,
      privatePath: this.privatePath,
      data: this.nodeData(),
    });
    switch (result.kind) {
      case 'created':
        this.owns(result.czxid, result.docVersion);
        this.observed(result.children, result.docVersion);
        return this.keepOrStepBack();
      case 'taken':
        this.observed(result.children, result.docVersion);
        return 'evaluate';
      case 'reaped':
        this.entry = null;
        return this.retryReaped('enterQueue');
      default:
        return this.afterFailure(result);
    }
  }

  /**
   * The best local request's rank is not our entry's: move the entry to it ([create, delete] in
   * one transaction). Up when a foreground request arrived; down when the last one gave up — kept
   * at foreground rank, the background request left was served ahead of other processes'
   * foreground writers queued after it.
   */
  private async rerank(): Promise<Step> {
    const link = await this.link();
    if (link === null) return 'leave';
    if (this.entry === null) return 'enterQueue';
    const rank = this.bestRank();
    try {
      const outcome = await link.zk.multi([
        { op: 'create', path: `${this.docPath}/${this.prefixOfRank(rank)}-`, data: this.nodeData(), mode: 'ephemeralSequential' },
        { op: 'delete', path: `${this.docPath}/${this.entry}`, version: -1 },
      ]);
      if (!outcome.ok) {
        this.entry = null;
        return 'enterQueue';
      }
      this.entry = lastSegment(outcome.results[0]?.path ?? '');
      this.entryRank = rank;
      return 'readQueue';
    } catch (error) {
      return this.afterFailure(classify(error));
    }
  }

  /** After a lost reply: what of ours is there? Never replay a request blindly. */
  private async recover(): Promise<Step> {
    this.apply('recover');
    await this.ctx.connection.settle(reconcilePauseMs(this.unknownReconciles));
    const link = await this.link();
    if (link === null) return 'leave';
    const result = await this.reconcileCounted(link);
    if (result.kind === 'noDocument') {
      this.entry = null;
      this.ownsPrivateLock = false;
      this.ownedCzxid = null;
      this.uncertain = false;
      return this.waiters.size === 0 ? 'leave' : 'fastPath';
    }
    if (result.kind !== 'reconciled') return result.kind === 'unknown' ? 'recover' : this.afterFailure(result);
    this.adopt(result);
    if (this.waiters.size === 0) return 'leave';
    if (this.ownsPrivateLock) return this.keepOrStepBack();
    if (this.entry !== null) return 'evaluate';
    return this.ctx.contention.contended(this.docPath) ? 'enterQueue' : 'fastPath';
  }

  /** What a reconciliation found is ours from now on; nothing is uncertain any more. */
  private adopt(result: Reconciled): void {
    this.entry = result.entry;
    const entry = result.entry === null ? null : parseEntryName(result.entry);
    this.entryRank = entry === null ? Number.POSITIVE_INFINITY : rankOf(entry.prefix, this.ctx.prefixes);
    this.ownsPrivateLock = result.privateLock !== null;
    this.ownedCzxid = result.privateLock?.czxid ?? null;
    // Which create made it is not known: 0 is below any epoch (a release then verifies first).
    this.epochAtCreate = 0;
    this.uncertain = false;
    this.observed(result.children, result.docVersion);
  }

  /**
   * Leaving with a request outcome unknown (ZooKeeper went away meanwhile): find our nodes before
   * finishing, however long the session takes to come back — an abandoned acquisition never
   * leaves an orphan behind (the session ending removes them too).
   */
  private async findOwnNodes(): Promise<void> {
    while (this.uncertain) {
      const link = await this.ctx.connection.whenConnected();
      if (link === null || link.generation !== this.generation) return;
      const result = await this.reconcileCounted(link);
      if (result.kind === 'reconciled') this.adopt(result);
      else if (result.kind === 'noDocument' || result.kind === 'gone') this.uncertain = false;
      else if (result.kind === 'refused') {
        this.ctx.logger.error({ err: result.error, key: this.key }, 'cannot look for the lock nodes of an abandoned acquisition');
        this.uncertain = false;
      } else await this.ctx.connection.settle(reconcilePauseMs(this.unknownReconciles));
    }
  }

  /** One reconciliation; counts those that could not tell anything, and says so when they go on. */
  private async reconcileCounted(link: Link): Promise<ReconcileResult> {
    const result = await reconcile(link.zk, this.docPath, { guid: this.guid, czxid: this.ownedCzxid });
    if (result.kind !== 'unknown') {
      this.unknownReconciles = 0;
      return result;
    }
    this.unknownReconciles++;
    if (this.unknownReconciles === RECONCILE_UNKNOWN_WARN_AFTER) {
      this.ctx.logger.warn({ key: this.key, tries: this.unknownReconciles }, 'cannot read what ZooKeeper holds for this lock; trying again, less often');
    }
    return result;
  }

  /**
   * We own privateLock: keep it if nobody is served before us, else give it back and wait. An
   * entry of ours ranked above every waiter now (left by a foreground request, when a yield that
   * would have re-queued us at the waiters' rank was refused or lost) gives no place: the waiters
   * come after every other process's entry of their rank or better.
   */
  private async keepOrStepBack(): Promise<Step> {
    const rank = this.bestRank();
    const placed = this.entry !== null && this.entryRank >= rank;
    const ahead = placed
      ? viewQueue(this.children, this.entry ?? '', this.ctx.prefixes).ahead.length
      : queueFromChildren(this.children, this.ctx.prefixes).filter((e) => e.name !== this.entry && rankOf(e.prefix, this.ctx.prefixes) <= rank).length;
    if (ahead === 0) return 'held';
    this.ctx.contention.mark(this.docPath);
    await this.stepBack();
    return this.entry === null ? 'enterQueue' : 'evaluate';
  }

  /** Nobody here wants the lock any more: delete what is ours (compare-and-delete) and finish. */
  private async leave(): Promise<Step> {
    this.ctx.detach(this.docPath, this);
    // Only a lock that may linger learns from coming back soon: a bulk's keys never linger, and
    // noting them (1,000 a bulk) only churned the bounded memory of recent releases.
    if (this.state === 'held' && this.mayLinger) this.ctx.recentReleases.noteReleased(this.docPath);
    if (this.state === 'released') return 'stop';
    this.apply('finish');
    // Out of the engine's map, our nodes are still ours until the release is through: the orphan sweep leaves them be.
    this.ctx.releasing.add(this.guid);
    try {
      if (this.uncertain) await this.findOwnNodes();
      const deleteDocument = this.deletesDocument();
      if (deleteDocument) this.ctx.containers.forgetPath(this.docPath);
      else if (this.createdDocument) this.ctx.containers.remember(this.docPath);
      const item = { docPath: this.docPath, generation: this.generation, privateLock: this.heldLock(), entry: this.entry, deleteDocument };
      await this.ctx.releases.submit(item, this.releasePace());
    } finally {
      this.ctx.releasing.delete(this.guid);
    }
    this.toReleased();
    return 'stop';
  }

  /**
   * `coalesced` only where nobody else is known to wait: no queue entry of ours, no contention
   * seen here lately, nobody queued when the lock was granted. A waiter that came since waits at
   * most for this process's release transactions already on their way.
   */
  private releasePace(): ReleasePace {
    const nobodyKnown = this.entry === null && !this.ctx.contention.contended(this.docPath) && this.nobodyElseQueued();
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
    return this.ctx.deletesCreatedDocuments && this.createdDocument && !(this.mayLinger && this.writtenAgain());
  }

  /** This process wants the document again and again: a local hand-over, or back within the linger window. */
  private wantedAgain(): boolean {
    return this.handedOverHere || this.releasedAgoMs <= this.ctx.lingerMs;
  }

  /** A local hand-over, or back within the recent releases' window (a second, or the linger window when longer). */
  private writtenAgain(): boolean {
    return this.handedOverHere || this.releasedAgoMs < Number.POSITIVE_INFINITY;
  }

  // ---- holding ---------------------------------------------------------------------------------

  private toHeld(): void {
    this.apply('grant');
    this.grantedAt = Date.now();
    this.handOvers = 0;
    this.reapedRetries = 0;
    // A forced release already seen may be newer than a create whose answer came only now.
    this.forcedReleaseSeen(this.ctx.forcedEpoch.latestForcedZxid());
    this.watchPrivateLock();
    this.foreign.granted(this.children);
    const first = this.waiters.shift();
    if (first === undefined) {
      void this.leave();
      return;
    }
    this.grantTo(first, false);
  }

  private grantTo(member: LockAcquisition, local: boolean): void {
    this.holder = member;
    if (local) this.handedOverHere = true;
    member.grant({ queuePosition: member.queuePositionOnArrival, handedOverLocally: local, fencingToken: this.ownedCzxid ?? 0 }, Date.now());
    if (this.waiters.size > 0) this.watchForeignQueue();
  }

  /** The last local holder is done: compare-and-delete privateLock (and our entry), coalesced. */
  private async releaseLock(): Promise<void> {
    await this.leave();
  }

  /**
   * Others wait (or a fresh grant is wanted): one transaction re-queues us at our best local
   * rank and gives privateLock back — [create entry, check(doc, v), check(epoch), delete
   * (privateLock), delete(old entry)] — so our waiters queue behind the other processes, FIFO.
   */
  private async yieldLock(): Promise<void> {
    this.apply('requeue');
    const link = await this.link();
    if (link === null) {
      await this.leave();
      return;
    }
    const rank = this.bestRank();
    const old = this.entry;
    try {
      const outcome = await link.zk.multi([
        { op: 'create', path: `${this.docPath}/${this.prefixOfRank(rank)}-`, data: this.nodeData(), mode: 'ephemeralSequential' },
        { op: 'check', path: this.docPath, version: this.docVersion },
        this.ctx.forcedEpoch.checkOp(this.epochAtCreate),
        { op: 'delete', path: this.privatePath, version: 0 },
        ...(old === null ? [] : [{ op: 'delete' as const, path: `${this.docPath}/${old}`, version: -1 }]),
      ]);
      if (!outcome.ok) {
        // privateLock is gone: an operator force-released it. The document's version or the epoch
        // moved, or our old entry was deleted by hand: privateLock may still be ours, and the
        // release's compare-and-delete finds out (it never deletes another holder's).
        this.privateLockGone = YIELD_LOCK_GONE_OPS.has(outcome.failedIndex);
        this.apply('requeueRefused');
        return this.relinquish();
      }
      this.entry = lastSegment(outcome.results[0]?.path ?? '');
      this.entryRank = rank;
      this.ownsPrivateLock = false;
      this.ownedCzxid = null;
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

  /**
   * A lost lock is never handed over: delete what is still ours, then the waiters (and whoever
   * arrives meanwhile) start over with a fresh acquisition, ordered after that release.
   */
  private async relinquish(): Promise<void> {
    this.apply('finish');
    await this.ctx.releases.submit({
      docPath: this.docPath,
      generation: this.generation,
      privateLock: this.privateLockGone ? null : this.heldLock(),
      entry: this.entry,
      deleteDocument: false,
    });
    this.ctx.detach(this.docPath, this);
    // The session may have ended meanwhile: then `end` failed the waiters already.
    if (this.isReleased()) return;
    this.toReleased();
    const waiters = this.waiters.drain();
    if (waiters.length > 0) this.ctx.rehome(this.key, waiters);
  }

  private toLost(reason: string): void {
    const from = this.state;
    if (transitionOf(from, 'lose') === undefined) return;
    this.apply('lose');
    if (from === 'idle') {
      void this.relinquish();
      return;
    }
    if (this.holder?.markLost(reason) === true) this.ctx.events.lost({ key: this.key, reason });
  }

  // ---- watches ---------------------------------------------------------------------------------

  /**
   * A single acquisition's grant watches its privateLock (a read sent now, not awaited): deleted
   * by hand, the lock is lost at once — nothing new is forwarded or handed over under it — and
   * its release deletes nothing by that name. A bulk's keys (one read each would double a bulk's
   * requests) learn it at their release, which verifies first (release-batcher.ts).
   */
  private watchPrivateLock(): void {
    const czxid = this.ownedCzxid;
    if (!this.mayLinger || czxid === null || this.holderWatch?.czxid === czxid) return;
    this.holderWatch = new HolderWatch(this.ctx.connection, this.privatePath, czxid, this.generation, () => this.privateLockWent(czxid));
    this.holderWatch.arm();
  }

  /** Our privateLock of `czxid` went, and not by our own release, yield or step-back. */
  private privateLockWent(czxid: number): void {
    if (this.ownedCzxid !== czxid) return;
    if (this.state === 'lost') this.privateLockGone = true;
    if (!this.holdsPrivateLock()) return;
    this.privateLockGone = true;
    this.ctx.logger.warn({ key: this.key }, 'privateLock was deleted while held (by hand?): the lock is lost, nothing is forwarded under it');
    this.toLost('privateLock was deleted while held (a forced release, or by hand)');
  }

  /** While held with local waiters: see other processes' entries, for the hand-over bound. */
  private watchForeignQueue(): void {
    if (this.state !== 'held') return;
    const link = this.ctx.connection.current();
    if (link === null || link.generation !== this.generation) return;
    this.foreign.watch(link.zk);
  }

  /**
   * A forced release at `forcedZxid` was seen (the forced-release epoch moved): if our privateLock
   * is older, read it — gone, or not ours any more, it was force-released. This replaces a holder
   * watch per grant (a read per write: 11–14% of an uncontended write's CPU in `write-uncontended`)
   * and covers a bulk's keys too, which never had one. Locks created after it are untouched by it.
   */
  forcedReleaseSeen(forcedZxid: number): void {
    if (!this.holdsPrivateLock() || this.ownedCzxid === null || this.ownedCzxid > forcedZxid) return;
    const link = this.ctx.connection.current();
    // No link: a forced release meanwhile fires the epoch watch again when the session's link is back.
    if (link === null || link.generation !== this.generation) return;
    this.verifyStillOurs(link);
  }

  private verifyStillOurs(link: Link): void {
    const incarnation = this.incarnation;
    const forced = (): void => {
      if (incarnation !== this.incarnation || !this.holdsPrivateLock()) return;
      this.privateLockGone = true;
      this.toLost('privateLock was deleted (forced release by an operator)');
    };
    link.zk.get(this.privatePath).then(
      (node) => {
        if (node.stat.czxid !== this.ownedCzxid) forced();
      },
      (error: unknown) => {
        // Only a lost connection or an ended session say nothing about privateLock here; any other
        // failure to read it (NONODE, but also SESSIONMOVED) counts as the forced release it may be.
        const zkError = toZkError(error);
        if (!zkError.connectionLost && !zkError.sessionGone) forced();
      },
    );
  }

  /** Leaves a watch on `path` and sleeps until it fires, the node is gone, or a local change. */
  private async waitOn(path: string): Promise<WakeReason> {
    // Armed before waiting for the link: a local change while ZooKeeper is away (a foreground
    // arrival, the last request giving up) must still wake the loop once the watch is left.
    this.wakeUp.arm();
    const link = await this.link();
    if (link === null) {
      await this.ctx.connection.settle();
      return 'poked';
    }
    try {
      await link.zk.getWatched(path, () => this.wake('event'));
    } catch (error) {
      const failure = classify(error);
      if (failure.kind === 'refused' && failure.error.code === 'NONODE') return 'gone';
      if (failure.kind === 'refused') throw failure.error;
      // Connection lost (or session gone): wait for the session to settle, then look again.
      await this.ctx.connection.settle();
      return 'poked';
    }
    return this.wakeUp.sleep(this.state === 'released');
  }

  private wake(reason: WakeReason): void {
    this.wakeUp.wake(reason);
  }

  // ---- small helpers -----------------------------------------------------------------------------

  private whenFinished(): Promise<void> {
    if (this.state === 'released') return Promise.resolve();
    if (this.finished === null) {
      let resolve = (): void => undefined;
      const promise = new Promise<void>((r) => (resolve = r));
      this.finished = { promise, resolve };
    }
    return this.finished.promise;
  }

  /** privateLock is ours and vouched for: a local holder has it, or it lingers for the next one. */
  private holdsPrivateLock(): boolean {
    return this.state === 'held' || this.state === 'idle';
  }

  private isReleased(): boolean {
    return this.state === 'released';
  }

  private toReleased(): void {
    this.apply('end');
  }

  /** Moves by the transition table (cohort-states.ts) and runs the bookkeeping that goes with the move. */
  private apply(event: CohortEvent): void {
    const transition = nextTransition(this.state, event);
    this.state = transition.to;
    for (const effect of transition.effects) {
      if (effect === 'newIncarnation') this.incarnation++;
      else if (effect === 'stopLingerTimer') this.clearLingerTimer();
      else this.finished?.resolve();
    }
  }

  /**
   * The connected link of our session; null when the engine closed, our session ended, or
   * ZooKeeper is unreachable — then the requests waiting here fail at once (503, nothing was
   * forwarded) instead of waiting out their timeouts.
   */
  private async link(): Promise<Link | null> {
    const link = await this.ctx.connection.whenConnected(undefined, true);
    if (link === null && this.ctx.connection.state() === 'unavailable') {
      const unreachable = new LockUnavailableError(`ZooKeeper unreachable while acquiring ${this.key.index}/${this.key.id}`);
      for (const member of this.waiters.drain()) member.group.fail(member, unreachable);
    }
    if (link === null || this.state === 'released') return null;
    if (link.generation !== this.generation) {
      if (this.entry !== null || this.ownsPrivateLock) return null;
      this.generation = link.generation;
    }
    return link;
  }

  private afterFailure(failure: Failure | Unread): Promise<Step> {
    return Promise.resolve(this.afterFailureStep(failure));
  }

  private afterFailureStep(failure: Failure | Unread): Step {
    if (failure.kind === 'unknown' || failure.kind === 'unread') {
      this.uncertain = true;
      // This lock adopts what its request made (its guid keeps the sweep off it); the sweep finds
      // whatever else an outcome nobody could vouch for may have left.
      if (failure.kind === 'unknown') void this.ctx.orphans.sweep();
      return 'recover';
    }
    if (failure.kind === 'gone') return 'stop';
    throw failure.error;
  }

  private retryReaped(step: Step): Step {
    this.reapedRetries++;
    if (this.reapedRetries > MAX_REAPED_RETRIES) throw new LockUnavailableError(`document node ${this.docPath} keeps disappearing`);
    return step;
  }

  /**
   * A privateLock of ours. The document node goes with its release only when the transaction that
   * created the node granted it (`grantedInBatch` says so right after): taken any other way — after
   * a yield to another process, or again after recovering — the node may be somebody else's now.
   */
  private owns(czxid: number, docVersion: number): void {
    this.ownsPrivateLock = true;
    // A new privateLock: a forced release seen before was of an earlier one.
    this.privateLockGone = false;
    this.ownedCzxid = czxid;
    this.docVersion = docVersion;
    this.createdDocument = false;
  }

  /**
   * Our privateLock as its release deletes it after a hold: without a watch of its own (a bulk's
   * keys), looked for among our session's nodes first — it may have been deleted by hand and the
   * name taken by the next holder meanwhile.
   */
  private heldLock(): OwnedLock | null {
    const lock = this.ownedLock();
    return lock === null || lock.gone !== undefined ? lock : { ...lock, verifyFirst: true };
  }

  private ownedLock(): OwnedLock | null {
    if (!this.ownsPrivateLock || this.ownedCzxid === null) return null;
    const watch = this.holderWatch?.czxid === this.ownedCzxid ? this.holderWatch : null;
    return { czxid: this.ownedCzxid, docVersion: this.docVersion, epoch: this.epochAtCreate, ...(watch === null ? {} : { gone: () => watch.gone() }) };
  }

  private async stepBack(): Promise<void> {
    const lock = this.ownedLock();
    this.ownsPrivateLock = false;
    this.ownedCzxid = null;
    await this.ctx.releases.submit({ docPath: this.docPath, generation: this.generation, privateLock: lock, entry: null, deleteDocument: false });
  }

  private observed(children: readonly string[], docVersion: number): void {
    this.children = children;
    this.docVersion = docVersion;
  }

  /** The first time the ZooKeeper queue is seen, the waiters learn how many were ahead there. */
  private notePositions(zkAhead: number): void {
    if (this.positioned) return;
    this.positioned = true;
    for (const member of this.waiters.values()) member.queuePositionOnArrival += zkAhead;
  }

  private bestRank(): number {
    const best = this.waiters.best() ?? this.holder?.priority ?? 'background';
    return best === 'foreground' ? 0 : 1;
  }

  private prefixOfRank(rank: number): string {
    return prefixFor(RANK_PRIORITY[rank] ?? 'background', this.ctx.prefixes);
  }

  private nodeData(): string {
    const first = this.waiters.peek() ?? this.holder;
    const request = first?.group.request;
    return encodeNodeData({
      guid: this.guid,
      owner: request?.owner ?? null,
      priority: first?.priority ?? null,
      acquiredAt: Date.now(),
      message: request?.message ?? '',
      entry: this.entry,
    });
  }
}
