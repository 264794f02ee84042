/**
 * When a local holder is done and another request of this process waits for the same key: pass
 * the lock on without a ZooKeeper round trip (cohorting: Dice, Marathe and Shavit, PPoPP 2012),
 * or yield it to the queue so other processes get their turn.
 */
export interface HandOverBounds {
  /** `zookeeper.lock.handover.max.count`: local hand-overs since the queue was last seen empty. */
  readonly maxCount: number;
  /** `zookeeper.lock.handover.max.ms`: time since the queue was last seen empty (or the grant). */
  readonly maxMs: number;
}

/** Other processes' queue entries, as last read by the child watch of the held document. */
export interface ForeignQueue {
  /** False until the child watch has answered once since the grant: assume someone may wait. */
  readonly known: boolean;
  /**
   * Read while the child watch was armed, so any change since would have made it unknown — as far
   * as this process has heard: a link gone silent delivers no watch event. So a watched read that
   * shows nobody else restarts the bound at the moment it was sent (`asOf`), never later: what the
   * process passes on locally after that moment stays bounded, silence or not. A read without the
   * watch (the grant's) is only as current as its round trip and restarts nothing.
   */
  readonly watched: boolean;
  /** When the read that showed this was sent (`Date.now()`); 0 when unknown. */
  readonly asOf: number;
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
  /** Local hand-overs in the current window (see {@link HandOverWindow}). */
  readonly handOvers: number;
  /** Ms since the current window began. */
  readonly msInWindow: number;
}

export type HandOverDecision = 'handOver' | 'yield';

export function decideHandOver(input: HandOverInput, bounds: HandOverBounds): HandOverDecision {
  if (!input.handOverAllowed) return 'yield';
  const { foreign } = input;
  // A foreground writer elsewhere never waits behind our background hand-overs — nor while the
  // queue just changed and has not been read again (it may be one).
  if (foreign.bestRank < input.nextRank || (!foreign.known && input.nextRank > 0)) return 'yield';
  if (input.handOvers >= bounds.maxCount || input.msInWindow >= bounds.maxMs) return 'yield';
  return 'handOver';
}

/** The queue was read with the watch armed and showed nobody else. */
export function seenEmpty(foreign: ForeignQueue): boolean {
  return foreign.known && foreign.watched && foreign.count === 0;
}

/**
 * The local hand-overs the bound counts: those since the ZooKeeper grant, or since the send of
 * the latest watched read that showed nobody else waiting, whichever is later. Counting from the
 * read's send, not its answer, keeps passes made while the answer travelled (or never came) in the
 * count.
 */
export class HandOverWindow {
  private from = 0;
  private readonly passes: number[] = [];

  /** At a ZooKeeper grant. */
  restart(now: number): void {
    this.from = now;
    this.passes.length = 0;
  }

  /** Restarts the window at `foreign.asOf` when that is a later look at an empty queue. */
  catchUp(foreign: ForeignQueue): void {
    if (!seenEmpty(foreign) || foreign.asOf <= this.from) return;
    this.from = foreign.asOf;
    let keep = 0;
    // A pass in the same millisecond as the send may have followed it: it stays counted.
    while (keep < this.passes.length && this.passes[keep]! < foreign.asOf) keep++;
    this.passes.splice(0, keep);
  }

  record(now: number): void {
    this.passes.push(now);
  }

  get count(): number {
    return this.passes.length;
  }

  msSinceStart(now: number): number {
    return now - this.from;
  }

  /** Half the window is used: time to look at the queue again, so that the next look arrives before the bound. */
  halfUsed(now: number, bounds: HandOverBounds): boolean {
    return this.passes.length * 2 >= bounds.maxCount || (now - this.from) * 2 >= bounds.maxMs;
  }
}
