import { storedId } from './document-store.js';
import type { DocumentWrite, WriteAction } from './document-write.js';
import type { JsonObject } from './es-errors.js';
import type { WriteOutcome } from './write-engine.js';

/** The request a write came in, as the stand-in saw it. */
export interface WriteRequestInfo {
  /** The stand-in's number for the request (`LoggedRequest.id`). */
  readonly id: number;
  readonly method: string;
  readonly url: string;
  /** `X-Opaque-Id` header, if any: the proxy forwards it, so a test can follow a write end to end. */
  readonly opaqueId: string | null;
}

/** One write as it was applied to its document. */
export interface AppliedWrite {
  /** Position in the stand-in's application order over all documents (1, 2, …). */
  readonly order: number;
  /** Concrete index. */
  readonly index: string;
  readonly id: string;
  /** `index/id`. */
  readonly key: string;
  readonly request: WriteRequestInfo;
  /** Position of the item in its `_bulk` (0-based); null for a single-document request. */
  readonly item: number | null;
  readonly action: WriteAction;
  /** What the client sent for this write: the document, the update request, or null (delete). */
  readonly body: unknown;
  /** `performance.now()` when the write arrived (entered the stand-in's write window) and when it was applied. */
  readonly arrivedAt: number;
  readonly appliedAt: number;
  /**
   * The same two instants on the stand-in's event counter: exact where timestamps can tie.
   * Two writes' intervals intersect when each arrived before the other was applied.
   */
  readonly arrivedTick: number;
  readonly appliedTick: number;
  readonly status: number;
  /** created, updated, deleted, noop, not_found; null when the write failed. */
  readonly result: string | null;
  /** `error.type` when the write failed (version_conflict_engine_exception, …). */
  readonly error: string | null;
  readonly version: number | null;
  readonly seqNo: number | null;
  readonly primaryTerm: number | null;
  /** The document right after this write (null: absent or deleted). */
  readonly source: JsonObject | null;
}

/** Two writes to one document from different requests whose application intervals intersect. */
export interface AppliedOverlap {
  readonly key: string;
  /** Applied first. */
  readonly first: AppliedWrite;
  /** Applied second: it arrived before `first` was applied. */
  readonly second: AppliedWrite;
}

export interface Application {
  readonly request: WriteRequestInfo;
  readonly arrivedAt: number;
  readonly arrivedTick: number;
  readonly appliedAt: number;
  readonly appliedTick: number;
  readonly writes: readonly { readonly write: DocumentWrite; readonly item: number | null; readonly outcome: WriteOutcome }[];
}

/**
 * The serialization oracle's record: per document, every write in the order it was applied, with
 * its application interval [arrived, applied], and the overlaps found on those intervals.
 */
export class WriteHistory {
  private readonly byKey = new Map<string, AppliedWrite[]>();
  private readonly overlapList: AppliedOverlap[] = [];
  private applied = 0;
  private readonly waiters: { predicate: (write: AppliedWrite) => boolean; wake: (write: AppliedWrite) => void }[] = [];

  /** Records the writes of one request, applied together at one instant. */
  record(application: Application): AppliedWrite[] {
    const entries = application.writes.map(({ write, item, outcome }) => this.entryOf(application, write, item, outcome));
    for (const key of new Set(entries.map((entry) => entry.key))) this.findOverlaps(key, entries.find((entry) => entry.key === key));
    for (const entry of entries) this.append(entry);
    for (const entry of entries) this.wakeWaiters(entry);
    return entries;
  }

  history(key: string): readonly AppliedWrite[] {
    return [...(this.byKey.get(key) ?? [])];
  }

  overlaps(): readonly AppliedOverlap[] {
    return [...this.overlapList];
  }

  /** Resolves with the first write applied from now on (or already recorded) that satisfies `predicate`. */
  waitFor(predicate: (write: AppliedWrite) => boolean): Promise<AppliedWrite> {
    for (const writes of this.byKey.values()) {
      const found = writes.find(predicate);
      if (found !== undefined) return Promise.resolve(found);
    }
    return new Promise((wake) => this.waiters.push({ predicate, wake }));
  }

  reset(): void {
    this.byKey.clear();
    this.overlapList.length = 0;
  }

  private entryOf(application: Application, write: DocumentWrite, item: number | null, outcome: WriteOutcome): AppliedWrite {
    this.applied += 1;
    const { request, arrivedAt, arrivedTick, appliedAt, appliedTick } = application;
    return {
      order: this.applied,
      index: write.index,
      id: write.id,
      // One document per id Lucene stores: ids differing only in unpaired surrogates share a history.
      key: `${write.index}/${storedId(write.id)}`,
      request,
      item,
      action: write.action,
      body: write.body,
      arrivedAt,
      appliedAt,
      arrivedTick,
      appliedTick,
      ...outcome,
    };
  }

  /** Earlier-applied writes of other requests that were applied after `later` arrived. */
  private findOverlaps(key: string, later: AppliedWrite | undefined): void {
    if (later === undefined) return;
    const seen = new Set<number>();
    const writes = this.byKey.get(key) ?? [];
    for (let n = writes.length - 1; n >= 0; n -= 1) {
      const earlier = writes[n];
      if (earlier === undefined || earlier.appliedTick < later.arrivedTick) break;
      if (earlier.request.id === later.request.id || seen.has(earlier.request.id)) continue;
      seen.add(earlier.request.id);
      this.overlapList.push({ key, first: earlier, second: later });
    }
  }

  private append(entry: AppliedWrite): void {
    const writes = this.byKey.get(entry.key) ?? [];
    writes.push(entry);
    this.byKey.set(entry.key, writes);
  }

  private wakeWaiters(entry: AppliedWrite): void {
    for (const waiter of this.waiters.filter((w) => w.predicate(entry))) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.wake(entry);
    }
  }
}
