import type { Priority } from './lock-engine.js';

/**
 * The requests of one process waiting for one key: foreground before background, arrival order
 * within a class. Two FIFO arrays keep push and shift O(1) in the common case; removal (timeout,
 * abort) is a linear scan of one class, which is short per key.
 *
 * A class's array is made with its first request, holding just that one: most keys never have
 * more than one request here at a time (a bulk's keys never do), and a push into an empty array
 * reserves 17 slots — the largest object a bulk's document lock carried.
 */
export class LocalQueue<T extends { readonly priority: Priority }> {
  private foreground: T[] | null = null;
  private background: T[] | null = null;

  get size(): number {
    return lengthOf(this.foreground) + lengthOf(this.background);
  }

  push(item: T): void {
    if (item.priority === 'foreground') this.foreground = appended(this.foreground, item);
    else this.background = appended(this.background, item);
  }

  /** False when the item was not queued (already served or withdrawn). */
  remove(item: T): boolean {
    const lane = item.priority === 'foreground' ? this.foreground : this.background;
    const index = lane === null ? -1 : lane.indexOf(item);
    if (lane === null || index < 0) return false;
    lane.splice(index, 1);
    return true;
  }

  peek(): T | undefined {
    return this.foreground?.[0] ?? this.background?.[0];
  }

  shift(): T | undefined {
    const { foreground } = this;
    return foreground !== null && foreground.length > 0 ? foreground.shift() : this.background?.shift();
  }

  /** Priority of the request that would be served next, null when empty. */
  best(): Priority | null {
    if (lengthOf(this.foreground) > 0) return 'foreground';
    return lengthOf(this.background) > 0 ? 'background' : null;
  }

  /** Queued requests a newcomer of `priority` waits behind (same or higher priority). */
  ahead(priority: Priority): number {
    return priority === 'foreground' ? lengthOf(this.foreground) : this.size;
  }

  /** Empties the queue, returning what was in it in service order. */
  drain(): T[] {
    const drained = this.values();
    this.foreground = null;
    this.background = null;
    return drained;
  }

  values(): T[] {
    return [...(this.foreground ?? []), ...(this.background ?? [])];
  }
}

function lengthOf(lane: readonly unknown[] | null): number {
  return lane === null ? 0 : lane.length;
}

/** The lane with `item` at its end: a new array of one when there was none or it is empty. */
function appended<T>(lane: T[] | null, item: T): T[] {
  if (lane === null || lane.length === 0) return [item];
  lane.push(item);
  return lane;
}
