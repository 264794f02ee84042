import { parseEntryName, queueFromChildren, rankOf } from '../queue-order.js';
import type { Link } from './connection.js';
import { CohortBase, type Step } from './cohort-base.js';
import type { GiveBack } from './cohort-ownership.js';
import { viewQueue } from './queue-wait.js';
import { RECONCILE_UNKNOWN_WARN_AFTER, type ReconcileResult, type Reconciled, reconcile, reconcilePauseMs } from './recovery.js';

/**
 * Reconciliation after a lost reply: a create or transaction of ours may have been applied
 * without our seeing the answer, so nothing is sent again blindly — we read what ZooKeeper holds,
 * recognise our entry and privateLock (recovery.ts), adopt them, and go on from there; or, when
 * leaving, find them so that the release deletes them.
 */
export abstract class RecoveringCohort extends CohortBase {
  /** Reconciliations in a row whose reads left the outcome unknown (paces the next one). */
  private unknownReconciles = 0;

  /** Gives the lock back to ZooKeeper, in the way `how` says (cohort-ownership.ts). */
  abstract giveBack(how: GiveBack): Promise<void>;

  /** After a lost reply: what of ours is there? Never replay a request blindly. */
  protected async recover(): Promise<Step> {
    this.apply('recover');
    await this.ctx.connection.settle(reconcilePauseMs(this.unknownReconciles));
    const link = await this.link();
    if (link === null) return 'leave';
    const result = await this.reconcileCounted(link);
    if (result.kind === 'noDocument') {
      this.nodes.entry = null;
      this.nodes.ownsPrivateLock = false;
      this.nodes.ownedCzxid = null;
      this.nodes.uncertain = false;
      return this.waiters.size === 0 ? 'leave' : 'fastPath';
    }
    if (result.kind !== 'reconciled') return result.kind === 'unknown' ? 'recover' : this.afterFailure(result);
    this.adopt(result);
    if (this.waiters.size === 0) return 'leave';
    if (this.nodes.ownsPrivateLock) return this.keepOrStepBack();
    if (this.nodes.entry !== null) return 'evaluate';
    return this.ctx.contention.contended(this.docPath) ? 'enterQueue' : 'fastPath';
  }

  /** What a reconciliation found is ours from now on; nothing is uncertain any more. */
  protected adopt(result: Reconciled): void {
    const entry = result.entry === null ? null : parseEntryName(result.entry);
    this.nodes.adopt(result, entry === null ? Number.POSITIVE_INFINITY : rankOf(entry.prefix, this.ctx.prefixes));
  }

  /**
   * Leaving with a request outcome unknown (ZooKeeper went away meanwhile): find our nodes before
   * finishing, however long the session takes to come back — an abandoned acquisition never
   * leaves an orphan behind (the session ending removes them too).
   */
  protected async findOwnNodes(): Promise<void> {
    while (this.nodes.uncertain) {
      const link = await this.ctx.connection.whenConnected();
      if (link === null || link.generation !== this.generation) return;
      const result = await this.reconcileCounted(link);
      if (result.kind === 'reconciled') this.adopt(result);
      else if (result.kind === 'noDocument' || result.kind === 'gone') this.nodes.uncertain = false;
      else if (result.kind === 'refused') {
        this.ctx.logger.error({ err: result.error, key: this.key }, 'cannot look for the lock nodes of an abandoned acquisition');
        this.nodes.uncertain = false;
      } else await this.ctx.connection.settle(reconcilePauseMs(this.unknownReconciles));
    }
  }

  /** One reconciliation; counts those that could not tell anything, and says so when they go on. */
  protected async reconcileCounted(link: Link): Promise<ReconcileResult> {
    const result = await reconcile(link.zk, this.docPath, { guid: this.guid, czxid: this.nodes.ownedCzxid });
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
  protected async keepOrStepBack(): Promise<Step> {
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
}
