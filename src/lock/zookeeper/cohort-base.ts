import { randomUUID } from 'node:crypto';
import { LocalQueue } from '../local-queue.js';
import type { LockAcquisition } from '../lock-acquisition.js';
import type { LockKey, Priority } from '../lock-engine.js';
import { LockUnavailableError } from '../lock-errors.js';
import { encodeRequestNodeData } from '../lock-node-data.js';
import { prefixFor } from '../queue-order.js';
import { privateLockPath } from './znode-names.js';
import type { Link } from './connection.js';
import type { EngineContext } from './engine-context.js';
import { ForeignQueueWatch, UNKNOWN_FOREIGN_QUEUE, foreignQueueOf } from './foreign-queue.js';
import { type ForeignQueue, HandOverWindow } from './handover-policy.js';
import type { HolderWatch } from './holder-watch.js';
import type { Failure, Unread } from './round-trip.js';
import { type WakeReason, WakeUp } from './wake-up.js';
import { type CohortEvent, type CohortState, nextTransition } from './cohort-states.js';
import { CohortNodes } from './cohort-nodes.js';
import { CohortRecovery } from './cohort-recovery.js';

/** The steps of the acquisition loop (Curator's LockInternals loop, with the fast path in front). */
export type Step = 'fastPath' | 'enterQueue' | 'readQueue' | 'evaluate' | 'arbitrate' | 'rerank' | 'recover' | 'held' | 'leave' | 'stop';

/**
 * Identifies one document lock's nodes (recovery after a lost reply, forced releases): unique
 * across processes by the random part, within the process by the counter. One `randomUUID` per
 * document lock was 4% of a bulk's allocations.
 */
const GUID_PREFIX = `${randomUUID()}-`;
let guidsIssued = 0;
function nextGuid(): string {
  guidsIssued++;
  return GUID_PREFIX + guidsIssued.toString(36);
}

const RANK_PRIORITY: readonly Priority[] = ['foreground', 'background'];

/**
 * What every part of a document lock shares: its key and nodes, its state (moved only through the
 * transition table), its local requests, and the small helpers each step uses. The parts build on
 * it in layers, each in its file: ownership and giving the lock back (cohort-ownership.ts), the
 * ZooKeeper queue loop (cohort-queue-loop.ts) and the local cohort the engine talks to
 * (document-lock.ts); what of ours is in ZooKeeper (cohort-nodes.ts) and its reconciliation
 * after a lost reply (cohort-recovery.ts) are parts of their own.
 */
export abstract class CohortBase {
  readonly key: LockKey;
  readonly docPath: string;
  readonly guid = nextGuid();
  state: CohortState = 'fastPath';
  readonly privatePath: string;
  protected readonly ctx: EngineContext;
  protected readonly waiters = new LocalQueue<LockAcquisition>();
  holder: LockAcquisition | null = null;
  /** Session generation our nodes belong to. */
  generation: number;
  /** What of ours ZooKeeper holds under the document. */
  protected readonly nodes = new CohortNodes();
  private recoveryPart: CohortRecovery | null = null;
  /** The watch on the privateLock we hold (its czxid's), for a single acquisition's grant. */
  protected holderWatch: HolderWatch | null = null;
  private handOverPart: HandOverWindow | null = null;
  /** When the latest ZooKeeper grant came (the hand-over window starts there when first needed). */
  private grantedAt = 0;
  private foreignPart: ForeignQueueWatch | null = null;
  /** Other processes' queue as the latest grant's own read showed it, until a watch takes over. */
  private foreignAtGrant: ForeignQueue = UNKNOWN_FOREIGN_QUEUE;
  protected incarnation = 0;
  /** Local requests seen so far (each one's `arrival`). */
  protected arrivals = 0;
  /** `arrivals` when the read of the queue that places the coming grant went out. */
  protected arrivalsAtQueueRead = 0;
  /** Granted to a single acquisition (not a bulk's key): may linger after its last local release. */
  protected mayLinger = true;
  protected positioned = false;
  protected reapedRetries = 0;
  private wakeUpPart: WakeUp | null = null;
  protected lingerTimer: NodeJS.Timeout | null = null;
  /** Ms since this process last released the document, as the recent releases remember it (Infinity: not within their window). */
  protected readonly releasedAgoMs: number;
  /** The lock was passed from one request of this process to the next at least once. */
  protected handedOverHere = false;
  private finished: { readonly promise: Promise<void>; readonly resolve: () => void } | null = null;

  /**
   * `docPath`: `documentPath(ctx.root, key)`, which the engine has just computed to look the lock
   * up. `key`: the engine's own copy (acquire-calls.ts makes one per key), kept as it is.
   */
  constructor(ctx: EngineContext, key: LockKey, docPath: string) {
    this.ctx = ctx;
    this.key = key;
    this.docPath = docPath;
    this.privatePath = privateLockPath(docPath);
    this.generation = ctx.connection.generation();
    this.releasedAgoMs = ctx.recentReleases.releasedAgoMs(this.docPath);
  }

  // The parts below are made on first use: most locks (a bulk's keys, a lone write's) never wait,
  // recover or hand over, and every object a lock carries is copied by each young-generation
  // collection while the lock is held.

  /** Finds what of ours is there after a lost reply. */
  protected get recovery(): CohortRecovery {
    return (this.recoveryPart ??= new CohortRecovery(this.ctx, this, this.nodes));
  }

  /** Local hand-overs the bound counts (handover-policy.ts), from the latest grant on. */
  protected get handOverWindow(): HandOverWindow {
    if (this.handOverPart === null) {
      this.handOverPart = new HandOverWindow();
      this.handOverPart.restart(this.grantedAt);
    }
    return this.handOverPart;
  }

  /** Other processes' queue entries, watched while local requests wait for a hand-over. */
  protected get foreign(): ForeignQueueWatch {
    return (this.foreignPart ??= new ForeignQueueWatch(
      {
        docPath: this.docPath,
        prefixes: this.ctx.prefixes,
        incarnation: () => this.incarnation,
        ownEntry: () => this.nodes.entry,
        stillWanted: () => this.state === 'held' && this.waiters.size > 0,
        changed: () => this.foreignQueueChanged(),
      },
      this.foreignAtGrant,
    ));
  }

  protected get wakeUp(): WakeUp {
    return (this.wakeUpPart ??= new WakeUp());
  }

  /** Runs the acquisition loop from `first` until it stops (held, left, or the session gone). */
  protected abstract acquireLoop(first: Step): Promise<void>;

  /** Other processes' queue for this document changed, as the child watch saw it. */
  protected abstract foreignQueueChanged(): void;

  /** Other processes' queue for this document, as last read or watched. */
  protected foreignQueue(): ForeignQueue {
    return this.foreignPart?.queue ?? this.foreignAtGrant;
  }

  /** Other processes' queue for this document, as last read or watched: known, and empty. */
  protected nobodyElseQueued(): boolean {
    const queue = this.foreignQueue();
    return queue.known && queue.count === 0;
  }

  /** A ZooKeeper grant, with the children read in its own round trip: a new hand-over window and foreign queue. */
  protected startGrant(now: number, children: readonly string[]): void {
    this.grantedAt = now;
    this.handOverPart?.restart(now);
    const queue = foreignQueueOf(children, this.nodes.entry, this.ctx.prefixes, false);
    if (this.foreignPart !== null) this.foreignPart.granted(queue);
    else this.foreignAtGrant = queue;
  }

  private clearLingerTimer(): void {
    if (this.lingerTimer === null) return;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
  }

  protected whenFinished(): Promise<void> {
    if (this.state === 'released') return Promise.resolve();
    if (this.finished === null) {
      let resolve = (): void => undefined;
      const promise = new Promise<void>((r) => (resolve = r));
      this.finished = { promise, resolve };
    }
    return this.finished.promise;
  }

  protected toReleased(): void {
    this.apply('end');
  }

  /** Moves by the transition table (cohort-states.ts) and runs the bookkeeping that goes with the move. */
  protected apply(event: CohortEvent): void {
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
  protected async link(): Promise<Link | null> {
    const link = await this.ctx.connection.whenConnected(undefined, true);
    if (link === null && this.ctx.connection.state() === 'unavailable') {
      const unreachable = new LockUnavailableError(`ZooKeeper unreachable while acquiring ${this.key.index}/${this.key.id}`);
      for (const member of this.waiters.drain()) member.group.fail(member, unreachable);
    }
    if (link === null || this.state === 'released') return null;
    if (link.generation !== this.generation) {
      if (this.nodes.entry !== null || this.nodes.ownsPrivateLock) return null;
      this.generation = link.generation;
    }
    return link;
  }

  protected afterFailureStep(failure: Failure | Unread): Step {
    if (failure.kind === 'unknown' || failure.kind === 'unread') {
      this.nodes.uncertain = true;
      // This lock adopts what its request made (its guid keeps the sweep off it); the sweep finds
      // whatever else an outcome nobody could vouch for may have left.
      if (failure.kind === 'unknown') void this.ctx.orphans.sweep();
      return 'recover';
    }
    if (failure.kind === 'gone') return 'stop';
    throw failure.error;
  }

  protected bestRank(): number {
    const best = this.waiters.best() ?? this.holder?.priority ?? 'background';
    return best === 'foreground' ? 0 : 1;
  }

  protected prefixOfRank(rank: number): string {
    return prefixFor(RANK_PRIORITY[rank] ?? 'background', this.ctx.prefixes);
  }

  protected nodeData(): string {
    const first = this.waiters.peek() ?? this.holder;
    return encodeRequestNodeData(first?.group.request ?? null, {
      guid: this.guid,
      priority: first?.priority ?? null,
      acquiredAt: Date.now(),
      entry: this.nodes.entry,
    });
  }

  protected wake(reason: WakeReason): void {
    this.wakeUp.wake(reason);
  }
}
