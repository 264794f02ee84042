import type { BulkItemResult } from './bulk-items.js';
import { closingQuote } from './json-string-end.js';

const QUOTE = 0x22;

/**
 * One item of an Elasticsearch `_bulk` answer, kept as the bytes Elasticsearch wrote: the merged
 * answer copies them instead of parsing every item into objects and writing them out again (6–7 %
 * of the proxy's busy time under concurrent bulks, plus the garbage). Parsed only where the proxy
 * looks inside an item (the fenced path).
 */
export class UpstreamItem {
  private readonly source: Buffer;
  private readonly start: number;
  private readonly end: number;
  /** The item carries an `error`, which makes the merged answer's `errors` true. */
  readonly failed: boolean;

  constructor(source: Buffer, start: number, end: number, failed: boolean) {
    this.source = source;
    this.start = start;
    this.end = end;
    this.failed = failed;
  }

  get byteLength(): number {
    return this.end - this.start;
  }

  copyInto(target: Buffer, offset: number): number {
    return this.source.copy(target, offset, this.start, this.end);
  }

  /** The item's one key: the action Elasticsearch answered for (`index`, `create`, `update`, `delete`). */
  action(): string {
    const open = this.source.indexOf(QUOTE, this.start);
    return JSON.parse(this.source.toString('utf8', open, closingQuote(this.source, open) + 1)) as string;
  }

  /** The same item, byte for byte, under another action name. */
  renamed(action: string): UpstreamItem {
    const close = closingQuote(this.source, this.source.indexOf(QUOTE, this.start));
    const bytes = Buffer.concat([Buffer.from(`{${JSON.stringify(action)}`), this.source.subarray(close + 1, this.end)]);
    return new UpstreamItem(bytes, 0, bytes.length, this.failed);
  }

  /** The item as an object: `{ "<action>": { _index, _id, status, ... } }`. */
  result(): BulkItemResult {
    return JSON.parse(this.source.toString('utf8', this.start, this.end)) as BulkItemResult;
  }
}

/** What the merged answer holds for an item: Elasticsearch's bytes, or an answer the proxy made. */
export type BulkItemAnswer = UpstreamItem | BulkItemResult;

export function resultOf(answer: BulkItemAnswer): BulkItemResult {
  return answer instanceof UpstreamItem ? answer.result() : answer;
}
