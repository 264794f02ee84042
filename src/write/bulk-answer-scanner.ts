import { itemFailed, type BulkItemResult } from './bulk-items.js';
import { closingQuote } from './json-string-end.js';
import { UpstreamItem } from './upstream-item.js';

/** An Elasticsearch `_bulk` answer read without building its items: where each item's bytes are. */
export interface ScannedBulkAnswer {
  readonly took: number;
  readonly errors: boolean;
  readonly items: readonly UpstreamItem[];
}

/** The bytes are not a `_bulk` answer: not JSON, no `items` array, or an item that is not one action with its result. */
export class MalformedBulkAnswer extends Error {}

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const UPPER_E = 0x45;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const LOWER_E = 0x65;
const LOWER_F = 0x66;
const LOWER_N = 0x6e;
const LOWER_T = 0x74;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');
/** Deeper nesting than any answer Elasticsearch writes is refused rather than followed. */
const MAX_DEPTH = 256;

/**
 * Reads an Elasticsearch `_bulk` answer: `took`, `errors` and the byte range of each item, checking
 * that the whole body is JSON and that every item is one action with its result object (what the
 * merged answer relies on), without making an object or a string per item. An item's `failed`
 * comes from the answer's `errors`: false means none failed (Elasticsearch sets it when any item
 * failed); otherwise each item is parsed to see whether it carries an `error`.
 */
export function scanBulkAnswer(bytes: Buffer): ScannedBulkAnswer {
  const scanner = new Scanner(bytes);
  let took = 0;
  let errors: boolean | null = null;
  let spans: number[] | null = null;
  if (scanner.space() !== OPEN_OBJECT) throw new MalformedBulkAnswer('not JSON');
  let empty = scanner.opened(CLOSE_OBJECT, 1);
  while (!empty) {
    const key = scanner.key();
    scanner.expect(COLON);
    if (key === 'took') took = scanner.numberOrSkip(took);
    else if (key === 'errors') errors = scanner.booleanOrSkip();
    else if (key === 'items') spans = scanner.items();
    else scanner.value(1);
    empty = scanner.closes(CLOSE_OBJECT);
  }
  if (scanner.space() !== -1) throw new MalformedBulkAnswer('not JSON');
  if (spans === null) throw new MalformedBulkAnswer('no items');
  return { took, errors: errors === true, items: itemsOf(bytes, spans, errors !== false) };
}

function itemsOf(bytes: Buffer, spans: readonly number[], mayHaveFailed: boolean): UpstreamItem[] {
  const items: UpstreamItem[] = [];
  for (let i = 0; i + 1 < spans.length; i += 2) {
    const start = spans[i] ?? 0;
    const end = spans[i + 1] ?? 0;
    items.push(new UpstreamItem(bytes, start, end, mayHaveFailed && carriesError(bytes, start, end)));
  }
  return items;
}

/** The scan has checked the item is one action with its result object. */
function carriesError(bytes: Buffer, start: number, end: number): boolean {
  return itemFailed(JSON.parse(bytes.toString('utf8', start, end)) as BulkItemResult);
}

class Scanner {
  at = 0;
  private readonly bytes: Buffer;

  constructor(bytes: Buffer) {
    this.bytes = bytes;
  }

  /** Skips whitespace; the byte there, -1 at the end. */
  space(): number {
    const bytes = this.bytes;
    let at = this.at;
    while (at < bytes.length) {
      const byte = bytes[at];
      if (byte !== SPACE && byte !== LF && byte !== CR && byte !== TAB) break;
      at++;
    }
    this.at = at;
    return at < bytes.length ? (bytes[at] ?? -1) : -1;
  }

  expect(byte: number): void {
    if (this.space() !== byte) throw new MalformedBulkAnswer('not JSON');
    this.at++;
  }

  /** An object key (the top level's only: `took`, `errors`, `items`, others skipped). */
  key(): string {
    if (this.space() !== QUOTE) throw new MalformedBulkAnswer('not JSON');
    const start = this.at;
    this.string();
    const text = this.bytes.toString('utf8', start + 1, this.at - 1);
    return text.includes('\\') ? (JSON.parse(`"${text}"`) as string) : text;
  }

  /** Past the string whose opening quote is at `at`. */
  string(): void {
    const close = closingQuote(this.bytes, this.at);
    if (close < 0) throw new MalformedBulkAnswer('not JSON');
    this.at = close + 1;
  }

  value(depth: number): void {
    const byte = this.space();
    if (byte === QUOTE) this.string();
    else if (byte === OPEN_OBJECT) this.object(depth + 1);
    else if (byte === OPEN_ARRAY) this.array(depth + 1);
    else this.scalar();
  }

  /** Past the opening byte at `at`; true when the container is empty, and then past its closing byte too. */
  opened(closing: number, depth: number): boolean {
    if (depth > MAX_DEPTH) throw new MalformedBulkAnswer('nested too deep');
    this.at++;
    if (this.space() !== closing) return false;
    this.at++;
    return true;
  }

  private object(depth: number): void {
    if (this.opened(CLOSE_OBJECT, depth)) return;
    for (;;) {
      if (this.space() !== QUOTE) throw new MalformedBulkAnswer('not JSON');
      this.string();
      this.expect(COLON);
      this.value(depth);
      if (this.closes(CLOSE_OBJECT)) return;
    }
  }

  private array(depth: number): void {
    if (this.opened(CLOSE_ARRAY, depth)) return;
    for (;;) {
      this.value(depth);
      if (this.closes(CLOSE_ARRAY)) return;
    }
  }

  /** After a member: true past the closing byte, false past a comma; anything else is not JSON. */
  closes(closing: number): boolean {
    const byte = this.space();
    this.at++;
    if (byte === closing) return true;
    if (byte === COMMA) return false;
    throw new MalformedBulkAnswer('not JSON');
  }

  /** `items`: an array of `{ "<action>": { ... } }`; the start and end of each, in pairs. */
  items(): number[] {
    if (this.space() !== OPEN_ARRAY) throw new MalformedBulkAnswer('no items');
    const spans: number[] = [];
    if (this.opened(CLOSE_ARRAY, 2)) return spans;
    for (;;) {
      this.space();
      const start = this.at;
      this.item();
      spans.push(start, this.at);
      if (this.closes(CLOSE_ARRAY)) return spans;
    }
  }

  private item(): void {
    if (this.space() !== OPEN_OBJECT) throw new MalformedBulkAnswer('an item that is not one action with its result');
    this.at++;
    if (this.space() !== QUOTE) throw new MalformedBulkAnswer('an item that is not one action with its result');
    this.string();
    this.expect(COLON);
    if (this.space() !== OPEN_OBJECT) throw new MalformedBulkAnswer('an item that is not one action with its result');
    this.object(3);
    if (this.space() !== CLOSE_OBJECT) throw new MalformedBulkAnswer('an item that is not one action with its result');
    this.at++;
  }

  /** A number's value; any other value is skipped and `otherwise` kept (as a non-number `took` reads 0). */
  numberOrSkip(otherwise: number): number {
    const byte = this.space();
    if (byte !== MINUS && (byte < ZERO || byte > NINE)) {
      this.value(1);
      return otherwise;
    }
    const start = this.at;
    this.scalar();
    return Number(this.bytes.toString('latin1', start, this.at));
  }

  /** `true` or `false`; null for any other value (skipped). */
  booleanOrSkip(): boolean | null {
    const byte = this.space();
    if (byte === LOWER_T || byte === LOWER_F) {
      this.scalar();
      return byte === LOWER_T;
    }
    this.value(1);
    return null;
  }

  private scalar(): void {
    const byte = this.space();
    if (byte === LOWER_T) this.literal(TRUE);
    else if (byte === LOWER_F) this.literal(FALSE);
    else if (byte === LOWER_N) this.literal(NULL);
    else this.at = numberEnd(this.bytes, this.at);
  }

  private literal(word: Buffer): void {
    if (this.at + word.length > this.bytes.length || this.bytes.compare(word, 0, word.length, this.at, this.at + word.length) !== 0) throw new MalformedBulkAnswer('not JSON');
    this.at += word.length;
  }
}

/** The end of the JSON number at `at` (RFC 8259 §6). */
function numberEnd(bytes: Buffer, start: number): number {
  let at = start;
  if (bytes[at] === MINUS) at++;
  if (bytes[at] === ZERO) at++;
  else if (isDigit(bytes[at])) at = digitsEnd(bytes, at);
  else throw new MalformedBulkAnswer('not JSON');
  if (bytes[at] === DOT) {
    if (!isDigit(bytes[at + 1])) throw new MalformedBulkAnswer('not JSON');
    at = digitsEnd(bytes, at + 1);
  }
  if (bytes[at] === LOWER_E || bytes[at] === UPPER_E) {
    at++;
    if (bytes[at] === PLUS || bytes[at] === MINUS) at++;
    if (!isDigit(bytes[at])) throw new MalformedBulkAnswer('not JSON');
    at = digitsEnd(bytes, at);
  }
  return at;
}

function digitsEnd(bytes: Buffer, start: number): number {
  let at = start;
  while (isDigit(bytes[at])) at++;
  return at;
}

function isDigit(byte: number | undefined): boolean {
  return byte !== undefined && byte >= ZERO && byte <= NINE;
}
