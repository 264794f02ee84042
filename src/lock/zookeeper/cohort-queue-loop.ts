import { LockUnavailableError } from '../lock-errors.js';
import { queueFromChildren, rankOf } from '../queue-order.js';
import { ZK_RC, ZkError } from '../../zookeeper/zk-errors.js';
import type { Link } from './connection.js';
import { type ParentNode, parentChain } from './containers.js';
import type { Step } from './cohort-base.js';
import { OwningCohort } from './cohort-ownership.js';
import { type FastPathPlan, type FastPathResult, fastPath, fusedFastPath } from './fast-path.js';
import { arbitrate, enterQueue, lastSegment, readQueue, viewQueue } from './queue-wait.js';
import { type PendingRelease, opsOf } from './release-item.js';
import { type Failure, type Unread, classifyFailure as classify } from './round-trip.js';
import type { WakeReason } from './wake-up.js';
import { indexPath } from './znode-names.js';

/** Round trips that found the document reaped under them, in a row, before giving up. */
const MAX_REAPED_RETRIES = 5;

/**
 * The ZooKeeper queue loop (Curator's LockInternals loop, with a fast path in front): try
 * privateLock in one round trip, else queue an entry, watch the one ahead, arbitrate at the head,
 * re-rank when the best local request changes, and after a lost reply go on from what the
 * reconciliation found (cohort-recovery.ts). Each step returns the next; the loop stops when the
 * lock is held, given back, or the session is gone.
 */
export abstract class QueueLoop extends OwningCohort {
  /** privateLock is ours and nobody is served before us: the first local request holds it. */
  protected abstract toHeld(): void;

  protected async acquireLoop(first: Step): Promise<void> {
    let step = first;
    try {
      while (step !== 'stop') {
        if (this.state === 'released') return;
        const nobodyWaits = this.waiters.size === 0 || this.ctx.connection.state() === 'closed';
        if (nobodyWaits && step !== 'recover' && step !== 'leave' && step !== 'held') step = 'leave';
        if (step === 'leave') {
          await this.giveBack('finish');
          return;
        }
        step = await this.run(step);
      }
    } catch (error) {
      this.ctx.logger.error({ err: error, key: this.key }, 'lock acquisition failed');
      const failure = new LockUnavailableError(`ZooKeeper error while acquiring ${this.key.index}/${this.key.id}`, { cause: error });
      for (const member of this.waiters.drain()) member.group.fail(member, failure);
      await this.giveBack('finish');
      // The failed request may have been applied after all (its answer misreported): look for what it left.
      void this.ctx.orphans.sweep();
    }
  }

  private run(step: Exclude<Step, 'stop' | 'leave'>): Promise<Step> {
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
        if (this.placeNeedsFreshQueue()) return this.confirmPlace();
        this.toHeld();
        return Promise.resolve('stop');
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
        this.nodes.owns(result.czxid, result.docVersion);
        this.nodes.observed(result.children, result.docVersion);
        if (result.kind === 'held') return 'held';
        this.ctx.contention.mark(this.docPath);
        await this.giveBack('stepBack');
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
      this.nodes.entry = result.entry;
      this.nodes.entryRank = rank;
      this.nodes.observed(result.children, result.docVersion);
      return 'evaluate';
    }
    return result.kind === 'reaped' ? this.retryReaped('enterQueue') : this.afterFailure(result);
  }

  private async readQueue(): Promise<Step> {
    const link = await this.link();
    if (link === null) return 'leave';
    const result = await readQueue(link.zk, this.docPath);
    if (result.kind === 'read') {
      this.nodes.observed(result.children, result.docVersion);
      return 'evaluate';
    }
    if (result.kind === 'reaped') {
      this.nodes.entry = null;
      return this.retryReaped('enterQueue');
    }
    return this.afterFailure(result);
  }

  /** Where do we stand: head with privateLock free → arbitrate; otherwise wait for the one ahead. */
  private async evaluate(): Promise<Step> {
    this.apply('evaluate');
    if (this.nodes.entry === null) return 'enterQueue';
    const view = viewQueue(this.nodes.children, this.nodes.entry, this.ctx.prefixes);
    if (view.position < 0) {
      // Our entry was deleted under us while the session lives (an operator): queue again.
      this.nodes.entry = null;
      return 'enterQueue';
    }
    this.notePositions(view.ahead.length + (view.privateLockTaken ? 1 : 0));
    if (this.bestRank() !== this.nodes.entryRank) return 'rerank';
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
        this.nodes.owns(result.czxid, result.docVersion);
        this.nodes.observed(result.children, result.docVersion);
        return this.keepOrStepBack();
      case 'taken':
        this.nodes.observed(result.children, result.docVersion);
        return 'evaluate';
      case 'reaped':
        this.nodes.entry = null;
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
    if (this.nodes.entry === null) return 'enterQueue';
    const rank = this.bestRank();
    try {
      const outcome = await link.zk.multi([
        { type: 'create', path: `${this.docPath}/${this.prefixOfRank(rank)}-`, data: this.nodeData(), mode: 'ephemeralSequential' },
        { type: 'delete', path: `${this.docPath}/${this.nodes.entry}`, version: -1 },
      ]);
      if (!outcome.ok) {
        this.nodes.entry = null;
        return 'enterQueue';
      }
      this.nodes.entry = lastSegment(outcome.results[0]?.path ?? '');
      this.nodes.entryRank = rank;
      return 'readQueue';
    } catch (error) {
      return this.afterFailure(classify(error));
    }
  }

  /** After a lost reply: what of ours is there? Never replay a request blindly. */
  private async recover(): Promise<Step> {
    this.apply('recover');
    await this.ctx.connection.settle(this.recovery.pauseMs());
    const link = await this.link();
    if (link === null) return 'leave';
    this.arrivalsAtQueueRead = this.arrivals;
    const result = await this.recovery.look(link);
    if (result.kind === 'noDocument') {
      this.nodes.forgetAll();
      return this.waiters.size === 0 ? 'leave' : 'fastPath';
    }
    if (result.kind !== 'reconciled') return result.kind === 'unknown' ? 'recover' : this.afterFailure(result);
    this.recovery.adopt(result);
    if (this.waiters.size === 0) return 'leave';
    if (this.nodes.ownsPrivateLock) return this.keepOrStepBack();
    if (this.nodes.entry !== null) return 'evaluate';
    return this.ctx.contention.contended(this.docPath) ? 'enterQueue' : 'fastPath';
  }

  /**
   * We own privateLock: keep it if nobody is served before us, else give it back and wait. An
   * entry of ours ranked above every waiter now (left by a foreground request, when a yield that
   * would have re-queued us at the waiters' rank was refused or lost) gives no place: the waiters
   * come after every other process's entry of their rank or better.
   */
  private async keepOrStepBack(): Promise<Step> {
    const rank = this.bestRank();
    const placed = this.nodes.entry !== null && this.nodes.entryRank >= rank;
    const ahead = placed
      ? viewQueue(this.nodes.children, this.nodes.entry ?? '', this.ctx.prefixes).ahead.length
      : queueFromChildren(this.nodes.children, this.ctx.prefixes).filter((e) => e.name !== this.nodes.entry && rankOf(e.prefix, this.ctx.prefixes) <= rank).length;
    if (ahead === 0) return 'held';
    this.ctx.contention.mark(this.docPath);
    await this.giveBack('stepBack');
    return this.nodes.entry === null ? 'enterQueue' : 'evaluate';
  }

  /**
   * The request about to be served is a background one that arrived after the read of the queue
   * that placed us (its requester gave up while the create was on its way, or it joined then):
   * another process's entry may have queued before our create and after that read — one a
   * foreground writer waiting since before this request began. Only a fresh read can say.
   */
  protected placeNeedsFreshQueue(): boolean {
    const first = this.waiters.peek();
    return first !== undefined && first.priority === 'background' && first.arrival > this.arrivalsAtQueueRead;
  }

  /** Reads the queue again and keeps privateLock only if nobody there comes before the request to be served. */
  private async confirmPlace(): Promise<Step> {
    const link = await this.link();
    if (link === null) return 'leave';
    this.arrivalsAtQueueRead = this.arrivals;
    const result = await readQueue(link.zk, this.docPath);
    // Our privateLock keeps the document node: gone, so is the lock; find out what is ours.
    if (result.kind === 'reaped') return 'recover';
    if (result.kind !== 'read') return this.afterFailure(result);
    // The document's version stays the one read before our create: a forced release since must still refuse our release.
    this.nodes.children = result.children;
    return this.keepOrStepBack();
  }

  /** Every node the document node needs first: wanted only by the paths that create it one by one. */
  private parents(): readonly ParentNode[] {
    return parentChain(this.ctx.root, indexPath(this.ctx.root, this.key.index), this.docPath);
  }

  private afterFailure(failure: Failure | Unread): Promise<Step> {
    return Promise.resolve(this.afterFailureStep(failure));
  }

  private retryReaped(step: Step): Step {
    this.reapedRetries++;
    if (this.reapedRetries > MAX_REAPED_RETRIES) throw new LockUnavailableError(`document node ${this.docPath} keeps disappearing`);
    return step;
  }

  /** The first time the ZooKeeper queue is seen, the waiters learn how many were ahead there. */
  private notePositions(zkAhead: number): void {
    if (this.positioned) return;
    this.positioned = true;
    for (const member of this.waiters.values()) member.queuePositionOnArrival += zkAhead;
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
}
