import { LockUnavailableError } from '../../lock-errors.js';
import { ZK_RC, ZkError } from '../../../zookeeper-client/zk-errors.js';
import type { Link } from '../session/connection.js';
import { type ParentNode, parentChain } from './containers.js';
import type { CohortCore } from '../cohort-core.js';
import { mayKeepLock } from '../cohort-decisions.js';
import type { CohortOwnership } from '../ownership/cohort-ownership.js';
import type { CohortRecovery } from '../recovery/cohort-recovery.js';
import type { LoopStep } from '../cohort-states.js';
import { type FastPathPlan, type FastPathResult, fastPath, fusedFastPath } from './fast-path.js';
import { type LocalCohort, prefixOfRank } from '../cohort/local-cohort.js';
import { arbitrate, enterQueue, lastSegment, readQueue, viewQueue } from './queue-wait.js';
import { type PendingRelease, opsOf } from '../ownership/release-item.js';
import { type Failure, type Unread, classifyFailure as classify } from '../session/round-trip.js';
import { type WakeReason, WakeUp } from './wake-up.js';
import { indexPath } from '../znode-names.js';

/** Round trips that found the document reaped under them, in a row, before giving up. */
const MAX_REAPED_RETRIES = 5;

/** What the queue loop asks of the document lock that holds it. */
export interface QueueLoopHost {
  /** privateLock is ours and nobody is served before us: the first local request holds it. */
  toHeld(): void;
  /** Reconciliation after a lost reply (cohort-recovery.ts). */
  recovery(): CohortRecovery;
}

/**
 * The ZooKeeper queue loop (Curator's LockInternals loop, with a fast path in front): try
 * privateLock in one round trip, else queue an entry, watch the one ahead, arbitrate at the head,
 * re-rank when the best local request changes, and after a lost reply go on from what the
 * reconciliation found (cohort-recovery.ts). Each step returns the next; the loop stops when the
 * lock is held, given back, or the session is gone.
 */
export class CohortQueueLoop {
  private readonly core: CohortCore;
  private readonly cohort: LocalCohort;
  private readonly ownership: CohortOwnership;
  private readonly host: QueueLoopHost;
  /** Round trips in a row that found the document reaped. */
  private reapedRetries = 0;
  private readonly wakeUp = new WakeUp();

  constructor(core: CohortCore, cohort: LocalCohort, ownership: CohortOwnership, host: QueueLoopHost) {
    this.core = core;
    this.cohort = cohort;
    this.ownership = ownership;
    this.host = host;
  }

  /** Runs the acquisition loop from `first` until it stops (held, given back, or the session gone). */
  async acquireLoop(first: LoopStep): Promise<void> {
    const core = this.core;
    let step = first;
    try {
      while (step !== 'stop') {
        if (core.state === 'released') return;
        const nobodyWaits = this.cohort.waiting === 0 || core.ctx.connection.state() === 'closed';
        if (nobodyWaits && step !== 'recover' && step !== 'finish' && step !== 'grant') step = 'finish';
        if (step === 'finish') {
          await this.ownership.giveBack('finish');
          return;
        }
        step = await this.run(step);
      }
    } catch (error) {
      core.ctx.logger.error({ err: error, key: core.key }, 'lock acquisition failed');
      const failure = new LockUnavailableError(`ZooKeeper error while acquiring ${core.key.index}/${core.key.id}`, { cause: error });
      this.cohort.failWaiters(failure);
      await this.ownership.giveBack('finish');
      // The failed request may have been applied after all (its answer misreported): look for what it left.
      void core.ctx.orphans.sweep();
    }
  }

  /** Runs the loop from what `failure` calls for. */
  continueAfterFailure(failure: Failure | Unread): void {
    void this.acquireLoop(this.afterFailureStep(failure));
  }

  /** The grant is made: reaped documents are counted afresh. */
  granted(): void {
    this.reapedRetries = 0;
  }

  /** A local change (or the session's end) for the loop asleep on a watch. */
  wake(reason: WakeReason): void {
    this.wakeUp.wake(reason);
  }

  private run(step: Exclude<LoopStep, 'stop' | 'finish'>): Promise<LoopStep> {
    switch (step) {
      case 'tryFastPath':
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
      case 'grant':
        if (this.cohort.placeNeedsFreshQueue()) return this.confirmPlace();
        this.host.toHeld();
        return Promise.resolve('stop');
    }
  }

  private async tryFastPath(): Promise<LoopStep> {
    const core = this.core;
    const link = await core.link();
    if (link === null) return 'finish';
    core.apply('tryFastPath');
    this.ownership.beforeCreate();
    const plan = {
      docPath: core.docPath,
      privatePath: core.privatePath,
      parents: this.parents(),
      rank: this.cohort.bestRank(),
      data: this.cohort.nodeData(),
    };
    await this.releaseIssued();
    const release = core.ctx.releases.takeForFusion(core.docPath, link.generation);
    const result = release === null ? await this.plainFastPath(link, plan) : await this.fusedFastPath(link, plan, release);
    switch (result.kind) {
      case 'held':
      case 'preceded':
        core.nodes.owns(result.czxid, result.token);
        core.nodes.observed(result.children);
        if (result.kind === 'held') return 'grant';
        core.ctx.contention.mark(core.docPath);
        await this.ownership.giveBack('stepBack');
        return 'enterQueue';
      case 'contended':
        core.ctx.contention.mark(core.docPath);
        return 'enterQueue';
      case 'reaped':
        return this.retryReaped('tryFastPath');
      default:
        return this.afterFailure(result);
    }
  }

  /** Our previous lock's release of this document, when it waits for its verification: ordered before what we send. */
  private async releaseIssued(): Promise<void> {
    const issued = this.core.ctx.releases.issuedFor([this.core.docPath]);
    if (issued !== null) await issued;
  }

  private plainFastPath(link: Link, plan: FastPathPlan): Promise<FastPathResult> {
    const ctx = this.core.ctx;
    ctx.releases.flushFor(this.core.docPath);
    return fastPath(link.zk, ctx.containers, ctx.prefixes, plan);
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
    const ctx = this.core.ctx;
    const ops = opsOf(release.item, ctx.forcedEpoch).map(({ op }) => op);
    try {
      const result = await fusedFastPath(link.zk, ctx.prefixes, plan, { ops, entry: release.item.entry });
      if (result.kind === 'releaseRefused') {
        ctx.releases.resubmit(release);
        return await this.plainFastPath(link, plan);
      }
      if (result.kind === 'refusedWhole') {
        ctx.releases.afterUnknownOutcome(release, result.error);
        return { kind: 'unknown' };
      }
      if (result.kind === 'unknown') ctx.releases.afterUnknownOutcome(release, new ZkError(ZK_RC.CONNECTIONLOSS, 'fused release: reply lost'));
      // Applied with the transaction (`held`, `preceded`, `unread`), or the session ended with its nodes (`gone`).
      else release.done();
      return result;
    } catch (error) {
      ctx.releases.resubmit(release);
      throw error;
    }
  }

  private async enterQueue(): Promise<LoopStep> {
    const core = this.core;
    const link = await core.link();
    if (link === null) return 'finish';
    core.apply('enterQueue');
    await this.releaseIssued();
    core.ctx.releases.flushFor(core.docPath);
    const rank = this.cohort.bestRank();
    const result = await enterQueue(link.zk, core.ctx.containers, {
      docPath: core.docPath,
      parents: this.parents(),
      prefix: prefixOfRank(rank, core),
      data: this.cohort.nodeData(),
    });
    if (result.kind === 'queued') {
      core.nodes.queued(result.entry, rank, result.entryCzxid);
      core.nodes.observed(result.children, result.docCzxid);
      return 'evaluate';
    }
    return result.kind === 'reaped' ? this.retryReaped('enterQueue') : this.afterFailure(result);
  }

  private async readQueue(): Promise<LoopStep> {
    const core = this.core;
    const link = await core.link();
    if (link === null) return 'finish';
    const result = await readQueue(link.zk, core.docPath);
    if (result.kind === 'read') {
      core.nodes.observed(result.children, result.docCzxid);
      return 'evaluate';
    }
    if (result.kind === 'reaped') {
      core.nodes.leftQueue();
      return this.retryReaped('enterQueue');
    }
    return this.afterFailure(result);
  }

  /** Where do we stand: head with privateLock free → arbitrate; otherwise wait for the one ahead. */
  private async evaluate(): Promise<LoopStep> {
    const core = this.core;
    const nodes = core.nodes;
    core.apply('evaluate');
    if (nodes.entry === null) return 'enterQueue';
    const view = viewQueue(nodes.children, nodes.entry, core.ctx.prefixes);
    if (view.position < 0) {
      // Our entry was deleted under us while the session lives (an operator): queue again.
      nodes.leftQueue();
      return 'enterQueue';
    }
    this.cohort.notePositions(view.ahead.length + (view.privateLockTaken ? 1 : 0));
    if (this.cohort.bestRank() !== nodes.entryRank) return 'rerank';
    if (view.ahead.length === 0 && !view.privateLockTaken) return 'arbitrate';
    const watched = view.ahead.length === 0 ? core.privatePath : `${core.docPath}/${view.ahead[view.ahead.length - 1]!.name}`;
    const woke = await this.waitOn(watched);
    if (woke === 'poked') return 'evaluate';
    // Speculate: at the head, or with one entry ahead that just went, the next round trip tries privateLock.
    return view.ahead.length <= 1 ? 'arbitrate' : 'readQueue';
  }

  private async arbitrate(): Promise<LoopStep> {
    const core = this.core;
    const link = await core.link();
    if (link === null) return 'finish';
    core.apply('arbitrate');
    this.ownership.beforeCreate();
    const result = await arbitrate(link.zk, {
      docPath: core.docPath,
      privatePath: core.privatePath,
      data: this.cohort.nodeData(),
    });
    switch (result.kind) {
      case 'created':
        core.nodes.owns(result.czxid, result.token);
        core.nodes.observed(result.children, result.docCzxid);
        return this.keepOrStepBack();
      case 'taken':
        core.nodes.observed(result.children, result.docCzxid);
        return 'evaluate';
      case 'reaped':
        core.nodes.leftQueue();
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
  private async rerank(): Promise<LoopStep> {
    const core = this.core;
    const link = await core.link();
    if (link === null) return 'finish';
    if (core.nodes.entry === null) return 'enterQueue';
    const rank = this.cohort.bestRank();
    try {
      const outcome = await link.zk.multi([
        { type: 'create', path: `${core.docPath}/${prefixOfRank(rank, core)}-`, data: this.cohort.nodeData(), mode: 'ephemeralSequential' },
        { type: 'delete', path: `${core.docPath}/${core.nodes.entry}`, version: -1 },
      ]);
      if (!outcome.ok) {
        core.nodes.leftQueue();
        return 'enterQueue';
      }
      core.nodes.queued(lastSegment(outcome.results[0]?.path ?? ''), rank, outcome.results[0]?.stat?.czxid ?? 0);
      return 'readQueue';
    } catch (error) {
      return this.afterFailure(classify(error));
    }
  }

  /** After a lost reply: what of ours is there? Never replay a request blindly. */
  private async recover(): Promise<LoopStep> {
    const core = this.core;
    const recovery = this.host.recovery();
    core.apply('recover');
    await core.ctx.connection.settle(recovery.pauseMs());
    const link = await core.link();
    if (link === null) return 'finish';
    this.cohort.queueRead();
    const result = await recovery.look(link);
    if (result.kind === 'noDocument') {
      core.nodes.forgetAll();
      return this.cohort.waiting === 0 ? 'finish' : 'tryFastPath';
    }
    if (result.kind !== 'reconciled') return result.kind === 'unknown' ? 'recover' : this.afterFailure(result);
    recovery.adopt(result);
    if (this.cohort.waiting === 0) return 'finish';
    if (core.nodes.ownsPrivateLock) return this.keepOrStepBack();
    if (core.nodes.entry !== null) return 'evaluate';
    return core.ctx.contention.contended(core.docPath) ? 'enterQueue' : 'tryFastPath';
  }

  /** We own privateLock: keep it if nobody is served before us (cohort-decisions.ts), else give it back and wait. */
  private async keepOrStepBack(): Promise<LoopStep> {
    const core = this.core;
    const nodes = core.nodes;
    const keep = mayKeepLock({ children: nodes.children, entry: nodes.entry, entryRank: nodes.entryRank, rank: this.cohort.bestRank(), prefixes: core.ctx.prefixes });
    if (keep) return 'grant';
    core.ctx.contention.mark(core.docPath);
    await this.ownership.giveBack('stepBack');
    return nodes.entry === null ? 'enterQueue' : 'evaluate';
  }

  /** Reads the queue again and keeps privateLock only if nobody there comes before the request to be served. */
  private async confirmPlace(): Promise<LoopStep> {
    const core = this.core;
    const link = await core.link();
    if (link === null) return 'finish';
    this.cohort.queueRead();
    const result = await readQueue(link.zk, core.docPath);
    // Our privateLock keeps the document node: gone, so is the lock; find out what is ours.
    if (result.kind === 'reaped') return 'recover';
    if (result.kind !== 'read') return this.afterFailure(result);
    // The document's version stays the one read before our create: a forced release since must still refuse our release.
    core.nodes.observed(result.children, result.docCzxid);
    return this.keepOrStepBack();
  }

  /** Every node the document node needs first: wanted only by the paths that create it one by one. */
  private parents(): readonly ParentNode[] {
    const core = this.core;
    return parentChain(core.ctx.root, indexPath(core.ctx.root, core.key.index), core.docPath);
  }

  private afterFailure(failure: Failure | Unread): Promise<LoopStep> {
    return Promise.resolve(this.afterFailureStep(failure));
  }

  private afterFailureStep(failure: Failure | Unread): LoopStep {
    if (failure.kind === 'unknown' || failure.kind === 'unread') {
      this.core.nodes.outcomeUnknown();
      // This lock adopts what its request made (its guid keeps the sweep off it); the sweep finds
      // whatever else an outcome nobody could vouch for may have left.
      if (failure.kind === 'unknown') void this.core.ctx.orphans.sweep();
      return 'recover';
    }
    if (failure.kind === 'gone') return 'stop';
    throw failure.error;
  }

  private retryReaped(step: LoopStep): LoopStep {
    this.reapedRetries++;
    if (this.reapedRetries > MAX_REAPED_RETRIES) throw new LockUnavailableError(`document node ${this.core.docPath} keeps disappearing`);
    return step;
  }

  /** Leaves a watch on `path` and sleeps until it fires, the node is gone, or a local change. */
  private async waitOn(path: string): Promise<WakeReason> {
    const core = this.core;
    // Armed before waiting for the link: a local change while ZooKeeper is away (a foreground
    // arrival, the last request giving up) must still wake the loop once the watch is left.
    this.wakeUp.arm();
    const link = await core.link();
    if (link === null) {
      await core.ctx.connection.settle();
      return 'poked';
    }
    try {
      await link.zk.getWatched(path, () => this.wake('event'));
    } catch (error) {
      const failure = classify(error);
      if (failure.kind === 'refused' && failure.error.code === 'NONODE') return 'gone';
      if (failure.kind === 'refused') throw failure.error;
      // Connection lost (or session gone): wait for the session to settle, then look again.
      await core.ctx.connection.settle();
      return 'poked';
    }
    return this.wakeUp.sleep(core.state === 'released');
  }
}
