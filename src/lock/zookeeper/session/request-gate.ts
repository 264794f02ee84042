/**
 * Bounds the ZooKeeper operations outstanding on one session, so that one request's work is bounded: a 100 MB bulk
 * must not queue millions of requests in the C client. FIFO and synchronous when there is room,
 * so requests keep the order they were issued in — the engine relies on ZooKeeper answering a
 * session's requests in that order (read-before-create, release-before-reacquire).
 */
export class RequestGate {
  private available: number;
  private readonly waiting: { readonly weight: number; readonly start: () => void }[] = [];

  constructor(readonly capacity: number) {
    this.available = capacity;
  }

  get outstanding(): number {
    return this.capacity - this.available;
  }

  /** Runs `issue` now if there is room (and nobody is queued), else when there is; weight = operations. */
  run<T>(weight: number, issue: () => Promise<T>): Promise<T> {
    const cost = Math.min(Math.max(1, weight), this.capacity);
    if (this.waiting.length === 0 && this.available >= cost) return this.start(cost, issue);
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ weight: cost, start: () => this.start(cost, issue).then(resolve, reject) });
    });
  }

  private start<T>(cost: number, issue: () => Promise<T>): Promise<T> {
    this.available -= cost;
    let result: Promise<T>;
    try {
      result = issue();
    } catch (error) {
      result = Promise.reject(error);
    }
    return result.finally(() => this.give(cost));
  }

  private give(cost: number): void {
    this.available += cost;
    while (this.waiting.length > 0 && this.available >= this.waiting[0]!.weight) this.waiting.shift()!.start();
  }
}
