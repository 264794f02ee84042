import type { DeadLetterRecord } from './dead-letter-record.js';

/** A line of the queue that could not be read (a torn write after a crash, or manual damage). */
export interface CorruptLine {
  /** The file name; for the index store, the document (`<index>/_doc/<id>`). */
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  readonly reason: string;
}

export interface DeadLetterListing {
  /** Oldest first. */
  readonly records: readonly DeadLetterRecord[];
  readonly corruptLines: readonly CorruptLine[];
  /** True when more records exist than one listing returns (the index store's bound); list again after replaying. */
  readonly truncated?: boolean;
  /** Things the reader should know about this listing (e.g. it fell back to local files). */
  readonly warnings?: readonly string[];
}

/** Where dead letters are kept: local JSON-lines files, or an Elasticsearch index shared by proxies. */
export interface DeadLetterStore {
  /** Resolves once the record is durable. */
  append(record: DeadLetterRecord): Promise<void>;
  list(options?: { readonly includeReplayed?: boolean }): Promise<DeadLetterListing>;
  get(id: string): Promise<DeadLetterRecord | null>;
  /** Marks a record replayed with the replay's outcome (e.g. the HTTP status). False when the id is unknown. */
  markReplayed(id: string, status: string, at?: Date): Promise<boolean>;
}
