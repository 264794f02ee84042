import type { LockKey } from '../../lock-engine.js';
import { parseEntryName, rankOf } from '../../queue-order.js';
import type { Link } from '../session/connection.js';
import type { CohortNodes } from '../cohort-nodes.js';
import type { EngineContext } from '../engine-context.js';
import { RECONCILE_UNKNOWN_WARN_AFTER, type ReconcileResult, type Reconciled, reconcile, reconcilePauseMs } from './recovery.js';

/** The document lock as its recovery sees it. */
export interface RecoveringLock {
  readonly key: LockKey;
  readonly docPath: string;
  readonly guid: string;
  /** Session generation our nodes belong to (it may move on while we look). */
  readonly generation: number;
}

/**
 * Reconciliation after a lost reply: a create or transaction of ours may have been applied
 * without our seeing the answer, so nothing is sent again blindly — we read what ZooKeeper holds,
 * recognise our entry and privateLock (recovery.ts) and adopt them; the queue loop goes on from
 * there, and a lock that leaves first finds them, so that its release deletes them. Reads that
 * tell nothing are paced, and said in the log when they go on.
 */
export class CohortRecovery {
  private readonly ctx: EngineContext;
  private readonly lock: RecoveringLock;
  private readonly nodes: CohortNodes;
  /** Reconciliations in a row whose reads left the outcome unknown (paces the next one). */
  private unknownReconciles = 0;

  constructor(ctx: EngineContext, lock: RecoveringLock, nodes: CohortNodes) {
    this.ctx = ctx;
    this.lock = lock;
    this.nodes = nodes;
  }

  /** How long to let the session settle before the next look. */
  pauseMs(): number {
    return reconcilePauseMs(this.unknownReconciles);
  }

  /** One reconciliation (a look at what is ours); counts those that could not tell anything, and says so when they go on. */
  async look(link: Link): Promise<ReconcileResult> {
    const result = await reconcile(link.zk, this.lock.docPath, { guid: this.lock.guid, czxid: this.nodes.ownedCzxid });
    if (result.kind !== 'unknown') {
      this.unknownReconciles = 0;
      return result;
    }
    this.unknownReconciles++;
    if (this.unknownReconciles === RECONCILE_UNKNOWN_WARN_AFTER) {
      this.ctx.logger.warn({ key: this.lock.key, tries: this.unknownReconciles }, 'cannot read what ZooKeeper holds for this lock; trying again, less often');
    }
    return result;
  }

  /** What a reconciliation found is ours from now on; nothing is uncertain any more. */
  adopt(result: Reconciled): void {
    const entry = result.entry === null ? null : parseEntryName(result.entry);
    this.nodes.adopt(result, entry === null ? Number.POSITIVE_INFINITY : rankOf(entry.prefix, this.ctx.prefixes));
  }

  /**
   * Leaving with a request outcome unknown (ZooKeeper went away meanwhile): find our nodes before
   * finishing, however long the session takes to come back — an abandoned acquisition never
   * leaves an orphan behind (the session ending removes them too).
   */
  async findOwnNodes(): Promise<void> {
    while (this.nodes.uncertain) {
      const link = await this.ctx.connection.whenConnected();
      if (link === null || link.generation !== this.lock.generation) return;
      const result = await this.look(link);
      if (result.kind === 'reconciled') this.adopt(result);
      else if (result.kind === 'noDocument' || result.kind === 'gone') this.nodes.outcomeSettled();
      else if (result.kind === 'refused') {
        this.ctx.logger.error({ err: result.error, key: this.lock.key }, 'cannot look for the lock nodes of an abandoned acquisition');
        this.nodes.outcomeSettled();
      } else await this.ctx.connection.settle(reconcilePauseMs(this.unknownReconciles));
    }
  }
}
