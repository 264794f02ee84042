/** One moment where a write arrived while another write to the same document was in flight. */
export interface OverlapExample {
  /** `index/id` (concrete index). */
  readonly key: string;
  /** Writes in flight on the key, the new one included. */
  readonly inFlight: number;
  readonly at: number;
  /** `METHOD url` of every write in flight on the key at that moment. */
  readonly requests: readonly string[];
}

export interface OverlapReport {
  /** Pairs of writes to one document whose application intervals intersect. */
  readonly count: number;
  readonly examples: readonly OverlapExample[];
}

/** A write that has arrived and is not applied yet (held by latency, a gate, or still running). */
export interface PendingWrite {
  readonly key: string;
  readonly requestId: number;
  /** `METHOD url`. */
  readonly label: string;
  readonly arrivedAt: number;
}

const MAX_EXAMPLES = 20;

/**
 * The serialization oracle's live half: a write is in flight on each document it names from its
 * arrival until the instant it is applied (not until its socket closes: a write whose client gave
 * up is still inside Elasticsearch, and still lands). Two writes to one document whose intervals
 * intersect are one overlap; counted when the later one arrives, so an overlap is visible while
 * both writes are still held.
 */
export class OverlapDetector {
  private readonly inFlight = new Map<string, PendingWrite[]>();
  private overlapCount = 0;
  private readonly examples: OverlapExample[] = [];
  private maxPerDocument = 0;

  /** Registers a write on `keys` (deduplicated); returns the function that ends it (idempotent). */
  begin(keys: readonly string[], request: { readonly id: number; readonly label: string }, arrivedAt: number): () => void {
    const pending = [...new Set(keys)].map((key) => ({ key, requestId: request.id, label: request.label, arrivedAt }));
    for (const write of pending) this.enter(write);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      for (const write of pending) this.leave(write);
    };
  }

  get report(): OverlapReport {
    return { count: this.overlapCount, examples: [...this.examples] };
  }

  get maxConcurrentPerDocument(): number {
    return this.maxPerDocument;
  }

  /** Writes in flight right now, over all documents (one per document a request writes). */
  get inFlightWrites(): number {
    let total = 0;
    for (const writes of this.inFlight.values()) total += writes.length;
    return total;
  }

  pending(): PendingWrite[] {
    return [...this.inFlight.values()].flat();
  }

  /** Clears the counters; writes in flight stay registered, so an overlap with them is still counted. */
  reset(): void {
    this.overlapCount = 0;
    this.examples.length = 0;
    this.maxPerDocument = 0;
  }

  private enter(write: PendingWrite): void {
    const writes = this.inFlight.get(write.key) ?? [];
    writes.push(write);
    this.inFlight.set(write.key, writes);
    this.maxPerDocument = Math.max(this.maxPerDocument, writes.length);
    if (writes.length < 2) return;
    this.overlapCount += writes.length - 1;
    if (this.examples.length < MAX_EXAMPLES) {
      this.examples.push({ key: write.key, inFlight: writes.length, at: write.arrivedAt, requests: writes.map((w) => w.label) });
    }
  }

  private leave(write: PendingWrite): void {
    const writes = this.inFlight.get(write.key);
    if (writes === undefined) return;
    const position = writes.indexOf(write);
    if (position >= 0) writes.splice(position, 1);
    if (writes.length === 0) this.inFlight.delete(write.key);
  }
}
