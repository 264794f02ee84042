import { isUtf8 } from 'node:buffer';

/**
 * A strict, allocation-light JSON reader over one line of a Buffer, for bulk action lines. It reads
 * token by token so errors come out in the same order and with the same token names
 * (START_OBJECT, VALUE_STRING, ...) as Elasticsearch's XContent parser. Syntax errors throw
 * `JsonSyntaxError`; the caller turns them into a 400 naming the line.
 */

/** Elasticsearch's `XContentParser.Token` names, used in its bulk error messages. */
export type TokenName =
  | 'START_OBJECT'
  | 'END_OBJECT'
  | 'START_ARRAY'
  | 'END_ARRAY'
  | 'FIELD_NAME'
  | 'VALUE_STRING'
  | 'VALUE_NUMBER'
  | 'VALUE_BOOLEAN'
  | 'VALUE_NULL';

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly column: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/** Jackson's default nesting limit (StreamReadConstraints.maxNestingDepth). */
const MAX_NESTING_DEPTH = 1000;

const LITERALS = ['true', 'false', 'null'] as const;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export class JsonLineReader {
  private pos: number;

  constructor(
    private readonly buf: Buffer,
    private readonly start: number,
    private readonly end: number,
  ) {
    this.pos = start;
    // Jackson skips a UTF-8 byte-order mark at the start of each parser's input.
    if (buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf) this.pos += 3;
  }

  /** Byte offset into the buffer of the next unread byte (after `peek()`: of the next token). */
  get offset(): number {
    return this.pos;
  }

  /** Skips JSON whitespace; true when the line has nothing left. */
  atEnd(): boolean {
    this.skipWhitespace();
    return this.pos >= this.end;
  }

  /** The next byte after whitespace, without consuming it (-1 at the end). */
  peek(): number {
    this.skipWhitespace();
    return this.pos < this.end ? (this.buf[this.pos] ?? -1) : -1;
  }

  /** Consumes `char` (after whitespace) or throws. */
  expect(char: string): void {
    if (this.peek() !== char.charCodeAt(0)) throw this.unexpected(`expected '${char}'`);
    this.pos++;
  }

  /** Consumes `char` when it is next; reports whether it was. */
  accept(char: string): boolean {
    if (this.peek() !== char.charCodeAt(0)) return false;
    this.pos++;
    return true;
  }

  /**
   * The name of the value token that starts here, validating numbers and literals the way Jackson's
   * `nextToken()` does (a string is reported without reading it: Jackson reads strings lazily).
   * Close markers and junk are syntax errors.
   */
  peekValueToken(): TokenName {
    const char = this.peek();
    switch (char) {
      case 0x7b:
        return 'START_OBJECT';
      case 0x5b:
        return 'START_ARRAY';
      case QUOTE:
        return 'VALUE_STRING';
      case 0x74:
      case 0x66:
        this.withRestore(() => this.readLiteral());
        return 'VALUE_BOOLEAN';
      case 0x6e:
        this.withRestore(() => this.readLiteral());
        return 'VALUE_NULL';
      default:
        if (char === 0x2d || isDigit(char)) {
          this.withRestore(() => this.readNumberText());
          return 'VALUE_NUMBER';
        }
        throw this.unexpected(char === 0x7d || char === 0x5d ? 'unexpected close marker' : 'unexpected character');
    }
  }

  /** Reads a string token (the opening quote is next) and returns its value. Invalid UTF-8 is a syntax error. */
  readString(): string {
    this.expect('"');
    let pieces: string[] | null = null;
    let runStart = this.pos;
    let nonAscii = false;
    while (this.pos < this.end) {
      const byte = this.buf[this.pos] ?? 0;
      if (byte === QUOTE) {
        const tail = this.decodeRun(runStart, this.pos, nonAscii);
        this.pos++;
        return pieces === null ? tail : pieces.join('') + tail;
      }
      if (byte < 0x20) throw this.unexpected('illegal unquoted control character in string');
      if (byte === BACKSLASH) {
        pieces ??= [];
        pieces.push(this.decodeRun(runStart, this.pos, nonAscii), this.readEscape());
        runStart = this.pos;
        nonAscii = false;
        continue;
      }
      if (byte >= 0x80) nonAscii = true;
      this.pos++;
    }
    throw this.unexpected('unterminated string');
  }

  /** Reads a number token and returns its text as written (Elasticsearch's `parser.text()`). */
  readNumberText(): string {
    this.skipWhitespace();
    const begin = this.pos;
    if (this.byteAt(this.pos) === 0x2d) this.pos++;
    if (this.byteAt(this.pos) === 0x30) {
      this.pos++;
      if (isDigit(this.byteAt(this.pos))) throw this.unexpected('leading zeroes are not allowed');
    } else {
      this.digits();
    }
    if (this.byteAt(this.pos) === 0x2e) {
      this.pos++;
      this.digits();
    }
    const exponent = this.byteAt(this.pos);
    if (exponent === 0x65 || exponent === 0x45) {
      this.pos++;
      const sign = this.byteAt(this.pos);
      if (sign === 0x2b || sign === 0x2d) this.pos++;
      this.digits();
    }
    this.requireDelimiter();
    return this.decodeRun(begin, this.pos, false);
  }

  /** Reads `true`, `false` or `null` and returns its text. */
  readLiteral(): 'true' | 'false' | 'null' {
    this.skipWhitespace();
    for (const literal of LITERALS) {
      if (this.startsWith(literal)) {
        this.pos += literal.length;
        this.requireDelimiter();
        return literal;
      }
    }
    throw this.unexpected('unrecognized token');
  }

  private startsWith(text: string): boolean {
    if (this.pos + text.length > this.end) return false;
    for (let i = 0; i < text.length; i++) if (this.buf[this.pos + i] !== text.charCodeAt(i)) return false;
    return true;
  }

  /** Reads and discards any JSON value (objects and arrays nested up to Jackson's limit). */
  skipValue(depth = 0): void {
    if (depth > MAX_NESTING_DEPTH) throw this.unexpected(`nesting depth exceeds ${MAX_NESTING_DEPTH}`);
    const token = this.peekValueToken();
    if (token === 'START_OBJECT') this.skipContainer('}', depth, () => {
      this.readString();
      this.expect(':');
    });
    else if (token === 'START_ARRAY') this.skipContainer(']', depth, () => undefined);
    else if (token === 'VALUE_STRING') this.readString();
    else if (token === 'VALUE_NUMBER') this.readNumberText();
    else this.readLiteral();
  }

  /** Builds a syntax error pointing at the current position. */
  unexpected(problem: string): JsonSyntaxError {
    const column = this.pos - this.start + 1;
    const found = this.pos < this.end ? ` '${String.fromCharCode(this.byteAt(this.pos))}'` : ' end of line';
    return new JsonSyntaxError(`${problem} at column ${column} (found${found})`, column);
  }

  private skipContainer(close: '}' | ']', depth: number, beforeValue: () => void): void {
    this.pos++;
    if (this.accept(close)) return;
    do {
      beforeValue();
      this.skipValue(depth + 1);
    } while (this.accept(','));
    this.expect(close);
  }

  private readEscape(): string {
    this.pos++;
    const code = this.byteAt(this.pos);
    this.pos++;
    switch (code) {
      case 0x22:
        return '"';
      case 0x5c:
        return '\\';
      case 0x2f:
        return '/';
      case 0x62:
        return '\b';
      case 0x66:
        return '\f';
      case 0x6e:
        return '\n';
      case 0x72:
        return '\r';
      case 0x74:
        return '\t';
      case 0x75: {
        const hex = this.buf.toString('latin1', this.pos, Math.min(this.end, this.pos + 4));
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw this.unexpected('invalid \\u escape');
        this.pos += 4;
        return String.fromCharCode(parseInt(hex, 16));
      }
      default:
        this.pos--;
        throw this.unexpected('unrecognized character escape');
    }
  }

  /** Short ASCII runs (keys, ids) are built directly: Buffer#toString costs more than the whole parse. */
  private decodeRun(from: number, to: number, nonAscii: boolean): string {
    if (nonAscii) {
      if (!isUtf8(this.buf.subarray(from, to))) throw this.unexpected('invalid UTF-8 in string');
      return this.buf.toString('utf8', from, to);
    }
    if (to - from > 64) return this.buf.toString('latin1', from, to);
    let text = '';
    for (let i = from; i < to; i++) text += String.fromCharCode(this.buf[i] ?? 0);
    return text;
  }

  private digits(): void {
    if (!isDigit(this.byteAt(this.pos))) throw this.unexpected('expected a digit');
    while (isDigit(this.byteAt(this.pos))) this.pos++;
  }

  private requireDelimiter(): void {
    const next = this.byteAt(this.pos);
    if (this.pos < this.end && !isWhitespace(next) && next !== 0x2c && next !== 0x7d && next !== 0x5d) {
      throw this.unexpected('unexpected character after value');
    }
  }

  private withRestore(read: () => void): void {
    const saved = this.pos;
    read();
    this.pos = saved;
  }

  private skipWhitespace(): void {
    while (this.pos < this.end && isWhitespace(this.byteAt(this.pos))) this.pos++;
  }

  private byteAt(offset: number): number {
    return offset < this.end ? (this.buf[offset] ?? -1) : -1;
  }
}

function isDigit(byte: number): boolean {
  return byte >= 0x30 && byte <= 0x39;
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0d || byte === 0x0a;
}
