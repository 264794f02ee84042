/**
 * When a local holder is done and another request of this process waits for the same key: pass
 * the lock on without a ZooKeeper round trip (cohorting: Dice, Marathe and Shavit, PPoPP 2012),
 * or yield it to the queue so other processes get their turn.
 */
export interface HandOverBounds {
  /** `zookeeper.lock.handover.max.count`: consecutive local hand-overs while others wait. */
  readonly maxCount: number;
  /** `zookeeper.lock.handover.max.ms`: time since the ZooKeeper grant while others wait. */
  readonly maxMs: number;
}

/** Other processes' queue entries, as last read by the child watch of the held document. */
export interface ForeignQueue {
  /** False until the child watch has answered once since the grant: assume someone may wait. */
  readonly known: boolean;
  /**
   * Read by the armed child watch, so any change since would have made it unknown. A read without
   * one (the grant's) is only as current as its round trip: it may bound-check hand-overs, never
   * restart the bound — a watch whose read goes unanswered (a link gone silent) would otherwise
   * let the process pass the lock on locally for as long as the silence lasts.
   */
  readonly watched: boolean;
  readonly count: number;
  /** Rank (0 foreground, 1 background, 2 other) of the best foreign entry; Infinity when none. */
  readonly bestRank: number;
}

export interface HandOverInput {
  /** The holder released with `handOver: false`. */
  readonly handOverAllowed: boolean;
  /** Rank of the local request that would be served next. */
  readonly nextRank: number;
  readonly foreign: ForeignQueue;
  /** Local hand-overs since the ZooKeeper grant (or since the last time nobody else waited). */
  readonly handOvers: number;
  readonly msSinceGrant: number;
}

export type HandOverDecision = 'handOver' | 'handOverAndReset' | 'yield';

export function decideHandOver(input: HandOverInput, bounds: HandOverBounds): HandOverDecision {
  if (!input.handOverAllowed) return 'yield';
  const { foreign } = input;
  if (foreign.known && foreign.watched && foreign.count === 0) return 'handOverAndReset';
  // A foreground writer elsewhere never waits behind our background hand-overs — nor while the
  // queue just changed and has not been read again (it may be one).
  if (foreign.bestRank < input.nextRank || (!foreign.known && input.nextRank > 0)) return 'yield';
  if (input.handOvers >= bounds.maxCount || input.msSinceGrant >= bounds.maxMs) return 'yield';
  return 'handOver';
}
