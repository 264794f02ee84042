import type { LockAcquisition, LockHome } from '../lock-acquisition.js';
import type { LockKey } from '../lock-engine.js';
import { LockUnavailableError } from '../lock-errors.js';
import { PRIVATE_LOCK } from './znode-names.js';
import type { EngineContext } from './engine-context.js';
import { CohortCore, type CoreHooks } from './cohort-core.js';
import { mayHoldPrivateLock } from './cohort-decisions.js';
import { CohortOwnership, type OwnershipHost } from './ownership/cohort-ownership.js';
import { CohortQueueLoop, type QueueLoopHost } from './queue/cohort-queue-loop.js';
import { CohortRecovery } from './recovery/cohort-recovery.js';
import type { CohortState, GiveBack, LoopStep } from './cohort-states.js';
import { LocalCohort, type LocalCohortHost } from './cohort/local-cohort.js';
import type { Failure, Unread } from './session/round-trip.js';
import type { WakeReason } from './queue/wake-up.js';

/**
 * One document's lock in this process, as the engine and its requests see it (Curator's
 * `InterProcessMutex`): it composes the parts and passes each the others' verbs; it holds
 * nothing but them. The parts, each the one writer of what it holds:
 * - the core (cohort-core.ts): identity, state — moved only by the transition table
 *   (cohort-states.ts) — grant incarnation, session generation, and our nodes (cohort-nodes.ts);
 * - the local cohort (local-cohort.ts): this process's requests, hand-over, linger;
 * - the queue loop (cohort-queue-loop.ts): fast path, entry, watches, arbitration, re-rank;
 * - ownership (cohort-ownership.ts): privateLock, the one verb that gives it back, epoch, pace;
 * - recovery (cohort-recovery.ts): reconciliation after a lost reply.
 * The questions with a pure answer are in cohort-decisions.ts.
 */
export class DocumentLock implements LockHome, CoreHooks, LocalCohortHost, OwnershipHost, QueueLoopHost {
  private readonly core: CohortCore;
  private readonly cohort: LocalCohort;
  private readonly ownership: CohortOwnership;
  // Made on first use: most locks (a bulk's keys) never wait in the queue or recover, and every
  // object a lock carries is copied by each young-generation collection while the lock is held.
  private loopPart: CohortQueueLoop | null = null;
  private recoveryPart: CohortRecovery | null = null;

  constructor(ctx: EngineContext, key: LockKey, docPath: string) {
    this.core = new CohortCore(ctx, key, docPath, this);
    this.cohort = new LocalCohort(this.core, this);
    this.ownership = new CohortOwnership(this.core, this.cohort, this);
  }

  private get loop(): CohortQueueLoop {
    return (this.loopPart ??= new CohortQueueLoop(this.core, this.cohort, this.ownership, this));
  }

  get key(): LockKey {
    return this.core.key;
  }

  get docPath(): string {
    return this.core.docPath;
  }

  get privatePath(): string {
    return this.core.privatePath;
  }

  get guid(): string {
    return this.core.guid;
  }

  get state(): CohortState {
    return this.core.state;
  }

  /** Session generation our nodes belong to. */
  get generation(): number {
    return this.core.generation;
  }

  get holder(): LockAcquisition | null {
    return this.cohort.holder;
  }

  get waiting(): number {
    return this.cohort.waiting;
  }

  localWaiters(): readonly LockAcquisition[] {
    return this.cohort.values();
  }

  // ---- requests of this process -------------------------------------------------------------

  arrive(member: LockAcquisition): void {
    member.home = this;
    this.cohort.arrive(member);
  }

  withdraw(member: LockAcquisition): Promise<void> | undefined {
    return this.cohort.withdraw(member);
  }

  /** Starts taking the ZooKeeper lock for the queued requests. */
  begin(): void {
    void this.loop.acquireLoop(this.core.ctx.contention.contended(this.core.docPath) ? 'enterQueue' : 'tryFastPath');
  }

  // ---- LockHome -------------------------------------------------------------------------------

  release(member: LockAcquisition, handOver: boolean): Promise<void> {
    return this.cohort.release(member, handOver);
  }

  releaseInBackground(member: LockAcquisition): void {
    this.cohort.releaseInBackground(member);
  }

  linkUp(): boolean {
    return this.core.ctx.connection.linkUp(this.core.generation);
  }

  async whenLinkUp(signal: AbortSignal): Promise<void> {
    const link = await this.core.ctx.connection.whenConnected(signal);
    if (link !== null) return;
    signal.throwIfAborted();
    throw new LockUnavailableError('lock engine closed');
  }

  // ---- the engine's questions and news --------------------------------------------------------

  /** Gives the lock back to ZooKeeper, the way `how` says (cohort-states.ts `GiveBack`). */
  giveBack(how: GiveBack): Promise<void> {
    return this.ownership.giveBack(how);
  }

  /** privateLock may be ours now (cohort-decisions.ts): the orphan sweep leaves it be. */
  mayHoldPrivateLock(): boolean {
    const nodes = this.core.nodes;
    return mayHoldPrivateLock(this.core.state, nodes.ownsPrivateLock, nodes.uncertain);
  }

  /** The node `name` of our document (privateLock or a queue entry) is ours as far as we know. */
  knowsNode(name: string): boolean {
    const nodes = this.core.nodes;
    return name === PRIVATE_LOCK ? nodes.ownsPrivateLock : name === nodes.entry;
  }

  /** The session ended (or the engine closes): its nodes are gone; waiters fail with `error`. */
  end(error: Error, reason: string): void {
    const holder = this.cohort.holder;
    this.core.apply('end');
    this.cohort.holderLost(reason, holder);
    this.cohort.failWaiters(error);
    this.wake('poked');
  }

  /** The link was silent past the safety margin: stop vouching, but keep privateLock while its write may still run. */
  marginExceeded(generation: number): void {
    this.ownership.marginExceeded(generation);
  }

  /** An operator force-released our privateLock through this process. */
  forcedHere(): void {
    this.ownership.forcedHere();
  }

  /** A forced release at `forcedZxid` was seen: if our privateLock is older, read it. */
  forcedReleaseSeen(forcedZxid: number): void {
    this.ownership.forcedReleaseSeen(forcedZxid);
  }

  // ---- batch acquisition (batch-acquire.ts) --------------------------------------------------

  /**
   * The batch's read of this document's queue goes out now. A request that arrives while it is
   * on its way is not placed by it: the grant its create brings reads again first (local-cohort.ts).
   */
  queueReadSent(): void {
    this.cohort.queueRead();
  }

  /** The batch judges the read's answer now: the rank of the request it places (local-cohort.ts). */
  judgeQueueRead(): number {
    return this.cohort.judgeQueueRead();
  }

  /** Call right before the batch's privateLock create is issued (cohort-ownership.ts); `readSentBefore`: after `queueReadSent`. */
  beforeCreate(readSentBefore: boolean): void {
    this.ownership.beforeCreate(readSentBefore);
  }

  /** Fills privateLock's data for a batch transaction. */
  lockData(): string {
    return this.cohort.nodeData();
  }

  /**
   * The batch transaction created our privateLock (`czxid`), and the document node when
   * `createdDocument`; `children`: the document's as read before it. `mayLinger`: a single
   * acquisition's grant (a bulk's keys do not linger: a child watch each). Arguments, not an
   * object: a bulk's keys are granted by the thousand.
   */
  grantedInBatch(czxid: number, token: number, createdDocument: boolean, children: readonly string[], mayLinger: boolean): void {
    this.core.nodes.owns(czxid, token, createdDocument);
    this.core.nodes.observed(children);
    this.cohort.grantedInBatch(mayLinger);
    if (this.cohort.waiting === 0) {
      void this.giveBack('finish');
      return;
    }
    if (this.cohort.placeNeedsFreshQueue()) void this.loop.acquireLoop('grant');
    else this.toHeld();
  }

  /** The batch found the key taken or queued: wait in the queue like a single acquisition. */
  contendedInBatch(): void {
    this.core.ctx.contention.mark(this.core.docPath);
    void this.loop.acquireLoop('enterQueue');
  }

  /** The batch transaction's outcome is unknown: find out what is ours first. */
  unknownInBatch(): void {
    this.core.nodes.outcomeUnknown();
    void this.loop.acquireLoop('recover');
  }

  // ---- between the parts -----------------------------------------------------------------------

  /** privateLock is ours and nobody is served before us: the first local request holds it. */
  toHeld(): void {
    this.core.apply('grant');
    const grantedAt = Date.now();
    this.loopPart?.granted();
    this.ownership.granted();
    this.cohort.granted(grantedAt);
  }

  recovery(): CohortRecovery {
    return (this.recoveryPart ??= new CohortRecovery(this.core.ctx, this.core, this.core.nodes));
  }

  finishInBackground(): void {
    this.ownership.finishInBackground();
  }

  watchHandedOnLock(): void {
    this.ownership.watchPrivateLock(true);
  }

  documentGone(): void {
    this.ownership.documentWent();
  }

  wake(reason: WakeReason): void {
    this.loopPart?.wake(reason);
  }

  continueLoop(step: LoopStep): void {
    void this.loop.acquireLoop(step);
  }

  continueAfterFailure(failure: Failure | Unread): void {
    this.loop.continueAfterFailure(failure);
  }

  stopLingerTimer(): void {
    this.cohort.stopLingerTimer();
  }

  failWaiters(error: Error): void {
    this.cohort.failWaiters(error);
  }
}
