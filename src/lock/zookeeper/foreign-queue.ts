import { type PrefixRanks, queueFromChildren, rankOf } from '../queue-order.js';
import type { ForeignQueue } from './handover-policy.js';
import type { LockZk } from './lock-zk.js';

export const UNKNOWN_FOREIGN_QUEUE: ForeignQueue = { known: false, watched: false, count: 0, bestRank: Number.POSITIVE_INFINITY };
/** Nobody else queued: what every key a bulk creates is granted with (one object for all of them). */
const NO_FOREIGN_QUEUE: ForeignQueue = Object.freeze({ known: true, watched: false, count: 0, bestRank: Number.POSITIVE_INFINITY });

/** Nobody else queued, as read by the armed child watch. */
const WATCHED_EMPTY_QUEUE: ForeignQueue = Object.freeze({ known: true, watched: true, count: 0, bestRank: Number.POSITIVE_INFINITY });

/** Other processes' (or seed clients') entries among `children`: every entry but ours. */
export function foreignQueueOf(children: readonly string[], ownEntry: string | null, prefixes: PrefixRanks, watched: boolean): ForeignQueue {
  if (children.length === 0) return watched ? WATCHED_EMPTY_QUEUE : NO_FOREIGN_QUEUE;
  let count = 0;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const entry of queueFromChildren(children, prefixes)) {
    if (entry.name === ownEntry) continue;
    count++;
    bestRank = Math.min(bestRank, rankOf(entry.prefix, prefixes));
  }
  return { known: true, watched, count, bestRank };
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
}

/**
 * Other processes' queue entries for a document held here: read in the grant's own round trip,
 * kept current by a child watch armed only while local requests wait for a hand-over (one per
 * grant; a watch of an earlier grant that fires later is ignored). A change makes the queue
 * unknown until it is read again.
 */
export class ForeignQueueWatch {
  private current: ForeignQueue = UNKNOWN_FOREIGN_QUEUE;
  private armedFor = 0;
  private readonly owner: ForeignQueueOwner;

  constructor(owner: ForeignQueueOwner) {
    this.owner = owner;
  }

  get queue(): ForeignQueue {
    return this.current;
  }

  /** At a grant: the children read in the same round trip. */
  granted(children: readonly string[]): void {
    this.current = foreignQueueOf(children, this.owner.ownEntry(), this.owner.prefixes, false);
  }

  watch(zk: LockZk): void {
    const incarnation = this.owner.incarnation();
    if (this.armedFor === incarnation) return;
    this.armedFor = incarnation;
    const onChange = (): void => {
      if (incarnation !== this.owner.incarnation()) return;
      this.armedFor = 0;
      this.current = { ...this.current, known: false };
      if (this.owner.stillWanted()) this.watch(zk);
      this.owner.changed();
    };
    zk.childrenWatched(this.owner.docPath, onChange).then(
      (children) => {
        if (incarnation !== this.owner.incarnation()) return;
        this.current = foreignQueueOf(children, this.owner.ownEntry(), this.owner.prefixes, true);
        this.owner.changed();
      },
      () => {
        if (incarnation === this.owner.incarnation()) this.armedFor = 0;
      },
    );
  }
}
