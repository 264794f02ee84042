import type { Priority } from '../lock-engine.js';
import { type PrefixRanks, queueFromChildren, rankOf } from '../queue-order.js';
import type { CohortState } from './cohort-states.js';
import { viewQueue } from './queue/queue-wait.js';

/**
 * The questions a document lock asks about itself, each answered in one place from plain values
 * (Curator's `getsTheLock` in our terms): the parts ask these, never a state list of their own.
 */

/** Do I hold the lock: privateLock is ours and vouched for — a local holder has it, or it lingers for the next one. */
export function holdsLock(state: CohortState): boolean {
  return state === 'held' || state === 'idle';
}

/**
 * May privateLock be ours now: held, or a create (or transaction) of ours that makes it may be on
 * its way or unanswered. The orphan sweep leaves a privateLock alone while this is true.
 */
export function mayHoldPrivateLock(state: CohortState, ownsPrivateLock: boolean, uncertain: boolean): boolean {
  return ownsPrivateLock || uncertain || state === 'fastPath' || state === 'arbitrating' || state === 'recovering';
}

export interface KeepInput {
  /** The document's children as last read. */
  readonly children: readonly string[];
  /** Our queue entry (null: none) and the rank it was made at. */
  readonly entry: string | null;
  readonly entryRank: number;
  /** Rank of the best local request now (0 foreground, 1 background). */
  readonly rank: number;
  readonly prefixes: PrefixRanks;
}

/**
 * May I keep the privateLock I own: nobody in the queue is served before the request I would
 * serve. An entry of ours gives no place when it is ranked above every waiter now (left by a
 * foreground request, when a yield that would have re-queued us at the waiters' rank was refused
 * or lost), nor when the read no longer lists it (deleted by hand, or with a forced release):
 * the waiters then come after every other process's entry of their rank or better.
 */
export function mayKeepLock(input: KeepInput): boolean {
  const { children, entry, rank, prefixes } = input;
  const view = entry === null || input.entryRank < rank ? null : viewQueue(children, entry, prefixes);
  const ahead =
    view !== null && view.position >= 0
      ? view.ahead.length
      : queueFromChildren(children, prefixes).filter((e) => e.name !== entry && rankOf(e.prefix, prefixes) <= rank).length;
  return ahead === 0;
}

/** The local request a grant would serve first. */
export interface NextLocalRequest {
  readonly priority: Priority;
  /** Its place in the order of this lock's local arrivals. */
  readonly arrival: number;
}

/** The read of the queue that placed the coming grant: local arrivals by then, and the best rank it placed. */
export interface PlacingRead {
  readonly arrivals: number;
  readonly priority: Priority;
}

/**
 * Must I read the queue again before serving `next`, a background request:
 * - it arrived after the read that placed us (its requester gave up while the create was on its
 *   way, or it joined then): another process's entry may have queued before our create and after
 *   that read, one a foreground writer waiting since before this request began;
 * - or the read placed a foreground request, which may pass background entries: another process's
 *   background entry in that read came first, and serving this request on it would pass it.
 */
export function mustReadQueueAgain(next: NextLocalRequest | undefined, read: PlacingRead): boolean {
  if (next === undefined || next.priority !== 'background') return false;
  return next.arrival > read.arrivals || read.priority === 'foreground';
}
