import type { Priority } from './lock-engine.js';

/**
 * The requests of one process waiting for one key: foreground before background, arrival order
 * within a class. Two FIFO arrays keep push and shift O(1) in the common case; removal (timeout,
 * abort) is a linear scan of one class, which is short per key.
 */
export class LocalQueue<T extends { readonly priority: Priority }> {
  private readonly foreground: T[] = [];
  private readonly background: T[] = [];

  get size(): number {
    return this.foreground.length + this.background.length;
  }

  push(item: T): void {
    this.lane(item.priority).push(item);
  }

  /** False when the item was not queued (already served or withdrawn). */
  remove(item: T): boolean {
    const lane = this.lane(item.priority);
    const index = lane.indexOf(item);
    if (index < 0) return false;
    lane.splice(index, 1);
    return true;
  }

  peek(): T | undefined {
    return this.foreground[0] ?? this.background[0];
  }

  shift(): T | undefined {
    return this.foreground.length > 0 ? this.foreground.shift() : this.background.shift();
  }

  /** Priority of the request that would be served next, null when empty. */
  best(): Priority | null {
    if (this.foreground.length > 0) return 'foreground';
    return this.background.length > 0 ? 'background' : null;
  }

  /** Queued requests a newcomer of `priority` waits behind (same or higher priority). */
  ahead(priority: Priority): number {
    return priority === 'foreground' ? this.foreground.length : this.size;
  }

  /** Empties the queue, returning what was in it in service order. */
  drain(): T[] {
    return [...this.foreground.splice(0), ...this.background.splice(0)];
  }

  values(): T[] {
    return [...this.foreground, ...this.background];
  }

  private lane(priority: Priority): T[] {
    return priority === 'foreground' ? this.foreground : this.background;
  }
}
