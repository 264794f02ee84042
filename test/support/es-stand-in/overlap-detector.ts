/** One moment where a write started while another write to the same document was in flight. */
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
  readonly count: number;
  readonly examples: readonly OverlapExample[];
}

const MAX_EXAMPLES = 20;

/**
 * The oracle of the serialization tests: counts moments where two writes to one document are
 * in flight at once. A write is in flight from the moment its body was received until its
 * response was sent, so stand-in latency widens the window a race needs.
 */
export class OverlapDetector {
  private readonly inFlight = new Map<string, string[]>();
  private overlapCount = 0;
  private readonly examples: OverlapExample[] = [];
  private maxPerDocument = 0;

  /** Registers a write on `keys` (deduplicated); returns the function that ends it. */
  begin(keys: readonly string[], label: string): () => void {
    const distinct = [...new Set(keys)];
    for (const key of distinct) this.enter(key, label);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      for (const key of distinct) this.leave(key, label);
    };
  }

  get report(): OverlapReport {
    return { count: this.overlapCount, examples: [...this.examples] };
  }

  get maxConcurrentPerDocument(): number {
    return this.maxPerDocument;
  }

  /** Writes in flight right now, over all documents. */
  get inFlightWrites(): number {
    let total = 0;
    for (const labels of this.inFlight.values()) total += labels.length;
    return total;
  }

  reset(): void {
    this.overlapCount = 0;
    this.examples.length = 0;
    this.maxPerDocument = 0;
  }

  private enter(key: string, label: string): void {
    const labels = this.inFlight.get(key) ?? [];
    labels.push(label);
    this.inFlight.set(key, labels);
    this.maxPerDocument = Math.max(this.maxPerDocument, labels.length);
    if (labels.length < 2) return;
    this.overlapCount += 1;
    if (this.examples.length < MAX_EXAMPLES) {
      this.examples.push({ key, inFlight: labels.length, at: performance.now(), requests: [...labels] });
    }
  }

  private leave(key: string, label: string): void {
    const labels = this.inFlight.get(key);
    if (labels === undefined) return;
    const position = labels.indexOf(label);
    if (position >= 0) labels.splice(position, 1);
    if (labels.length === 0) this.inFlight.delete(key);
  }
}
