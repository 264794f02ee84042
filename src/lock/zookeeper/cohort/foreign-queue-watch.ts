import { type PrefixRanks, queueFromChildren, rankOf } from '../../queue-order.js';
import { type ForeignQueue, seenEmpty } from './handover-policy.js';
import type { LockZk } from '../session/lock-zk.js';
import type { WatchEventType } from '../../../zookeeper-client/zk-client.js';
import { isZkCode } from '../../../zookeeper-client/zk-errors.js';

export const UNKNOWN_FOREIGN_QUEUE: ForeignQueue = { known: false, watched: false, asOf: 0, count: 0, bestRank: Number.POSITIVE_INFINITY };
/** Nobody else queued: what every key a bulk creates is granted with (one object for all of them). */
const NO_FOREIGN_QUEUE: ForeignQueue = Object.freeze({ known: true, watched: false, asOf: 0, count: 0, bestRank: Number.POSITIVE_INFINITY });

/**
 * Other processes' (or seed clients') entries among `children`: every entry but ours. `asOf`: when
 * a watched read was sent (0 for an unwatched one).
 */
export function foreignQueueOf(children: readonly string[], ownEntry: string | null, prefixes: PrefixRanks, watched: boolean, asOf = 0): ForeignQueue {
  if (children.length === 0 && !watched) return NO_FOREIGN_QUEUE;
  let count = 0;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const entry of queueFromChildren(children, prefixes)) {
    if (entry.name === ownEntry) continue;
    count++;
    bestRank = Math.min(bestRank, rankOf(entry.prefix, prefixes));
  }
  return { known: true, watched, asOf: watched ? asOf : 0, count, bestRank };
}

/** What the watch needs to know about the document lock it serves. */
export interface ForeignQueueOwner {
  readonly docPath: string;
  readonly prefixes: PrefixRanks;
  /** The grant the lock is in now; answers about an earlier one are ignored. */
  incarnation(): number;
  ownEntry(): string | null;
  /** Requests of this process still wait for a hand-over: keep watching. */
  stillWanted(): boolean;
  /** The queue read or watched for the current grant changed (read, or unknown after an event). */
  changed(): void;
  /**
   * The document node went while this grant stood: ZooKeeper deletes no node with children, so
   * our privateLock went before it (by hand, or a forced release) — news the holder watch of a
   * bulk's key, which has none, would learn only at its release.
   */
  documentGone(): void;
}

/**
 * Other processes' queue entries for a document held here: read in the grant's own round trip,
 * kept current by a child watch armed only while local requests wait for a hand-over (one per
 * grant; a watch of an earlier grant that fires later is ignored). A change makes the queue
 * unknown until it is read again.
 */
export class ForeignQueueWatch {
  private current: ForeignQueue;
  private armedFor = 0;
  /** Watch events seen: a read answered after one is stale. */
  private changes = 0;
  /** The grant a refresh read is on its way for (0: none). */
  private refreshingFor = 0;
  private readonly owner: ForeignQueueOwner;

  /** `current`: the queue as already known when the watch is first needed (the grant's own read). */
  constructor(owner: ForeignQueueOwner, current: ForeignQueue = UNKNOWN_FOREIGN_QUEUE) {
    this.owner = owner;
    this.current = current;
  }

  get queue(): ForeignQueue {
    return this.current;
  }

  /** At a grant: the queue as the children read in the same round trip show it. */
  granted(queue: ForeignQueue): void {
    this.current = queue;
  }

  watch(zk: LockZk): void {
    const incarnation = this.owner.incarnation();
    if (this.armedFor === incarnation) return;
    this.armedFor = incarnation;
    const onChange = (type: WatchEventType): void => {
      if (incarnation !== this.owner.incarnation()) return;
      if (type === 'deleted') this.owner.documentGone();
      this.changes++;
      this.armedFor = 0;
      this.current = { ...this.current, known: false };
      if (this.owner.stillWanted()) this.watch(zk);
      this.owner.changed();
    };
    const sentAt = Date.now();
    zk.childrenWatched(this.owner.docPath, onChange).then(
      (children) => {
        if (incarnation !== this.owner.incarnation()) return;
        this.current = foreignQueueOf(children, this.owner.ownEntry(), this.owner.prefixes, true, sentAt);
        this.owner.changed();
      },
      (error: unknown) => {
        if (incarnation !== this.owner.incarnation()) return;
        this.armedFor = 0;
        if (isZkCode(error, 'NONODE')) this.owner.documentGone();
      },
    );
  }

  /**
   * Reads the queue again while the armed watch has not fired: as good as a watched read sent now
   * (a change before it would have fired the watch first), so the hand-over window may restart at
   * its send. One read at a time per grant; only while the last look showed nobody else.
   */
  refresh(zk: LockZk): void {
    const incarnation = this.owner.incarnation();
    if (this.refreshingFor === incarnation || this.armedFor !== incarnation || !seenEmpty(this.current)) return;
    this.refreshingFor = incarnation;
    const changes = this.changes;
    const sentAt = Date.now();
    const settled = (): void => {
      if (this.refreshingFor === incarnation) this.refreshingFor = 0;
    };
    zk.children(this.owner.docPath).then(
      (read) => {
        settled();
        if (incarnation !== this.owner.incarnation() || changes !== this.changes || this.armedFor !== incarnation) return;
        this.current = foreignQueueOf(read.children, this.owner.ownEntry(), this.owner.prefixes, true, sentAt);
        this.owner.changed();
      },
      settled,
    );
  }
}
