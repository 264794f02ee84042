import { ConfigError } from './config-error.js';

/** One `key=value` pair of a properties file, with the line its logical line starts on. */
export interface PropertyEntry {
  readonly key: string;
  readonly value: string;
  readonly line: number;
}

const WHITESPACE = new Set([' ', '\t', '\f']);
const SEPARATORS = new Set(['=', ':']);
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { t: '\t', n: '\n', r: '\r', f: '\f' };

/**
 * Parses text the way `java.util.Properties.load(Reader)` does (the original plugin read this
 * file with it): `#`/`!` comments, `=`, `:` or whitespace separators, backslash continuations
 * whose next line loses its leading whitespace, `\t \n \r \f \uXXXX` escapes, any other escaped
 * character taken literally. One deliberate difference: a leading UTF-8 byte-order mark is
 * dropped, because Java would silently glue it to the first key and lose that setting.
 * Entries come back in file order; repeated keys are all returned (the last one wins in Java).
 */
export function parseProperties(text: string, sourceName: string): PropertyEntry[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  const entries: PropertyEntry[] = [];
  let index = 0;
  while (index < lines.length) {
    const startLine = index + 1;
    let logical = stripLeadingWhitespace(lines[index] ?? '');
    index += 1;
    if (logical === '' || logical.startsWith('#') || logical.startsWith('!')) continue;
    while (endsWithContinuation(logical)) {
      logical = logical.slice(0, -1);
      if (index >= lines.length) break; // Java drops a backslash at end of input
      logical += stripLeadingWhitespace(lines[index] ?? '');
      index += 1;
    }
    entries.push(parseLogicalLine(logical, `${sourceName}:${startLine}`, startLine));
  }
  return entries;
}

function stripLeadingWhitespace(line: string): string {
  let start = 0;
  while (start < line.length && WHITESPACE.has(line.charAt(start))) start += 1;
  return line.slice(start);
}

/** An odd number of trailing backslashes: the last one is not itself escaped. */
function endsWithContinuation(line: string): boolean {
  let count = 0;
  for (let i = line.length - 1; i >= 0 && line.charAt(i) === '\\'; i -= 1) count += 1;
  return count % 2 === 1;
}

function parseLogicalLine(logical: string, where: string, line: number): PropertyEntry {
  const { keyEnd, valueStart } = findSeparator(logical);
  return {
    key: unescape(logical.slice(0, keyEnd), where),
    value: unescape(logical.slice(valueStart), where),
    line,
  };
}

/**
 * The key ends at the first unescaped `=`, `:` or whitespace; the value starts after that
 * whitespace and at most one `=`/`:` (so `key = = v` has the value `= v`, as in Java).
 */
function findSeparator(logical: string): { keyEnd: number; valueStart: number } {
  let keyEnd = logical.length;
  let hasSeparator = false;
  let escaped = false;
  for (let i = 0; i < logical.length; i += 1) {
    const c = logical.charAt(i);
    if (!escaped && (SEPARATORS.has(c) || WHITESPACE.has(c))) {
      keyEnd = i;
      hasSeparator = SEPARATORS.has(c);
      break;
    }
    escaped = c === '\\' ? !escaped : false;
  }
  let valueStart = Math.min(keyEnd + 1, logical.length);
  while (valueStart < logical.length) {
    const c = logical.charAt(valueStart);
    if (WHITESPACE.has(c)) {
      valueStart += 1;
    } else if (!hasSeparator && SEPARATORS.has(c)) {
      hasSeparator = true;
      valueStart += 1;
    } else {
      break;
    }
  }
  return { keyEnd, valueStart };
}

function unescape(raw: string, where: string): string {
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const c = raw.charAt(i);
    i += 1;
    if (c !== '\\') {
      out += c;
      continue;
    }
    if (i >= raw.length) break; // unreachable from parseProperties; kept total for safety
    const escaped = raw.charAt(i);
    i += 1;
    if (escaped === 'u') {
      out += decodeUnicodeEscape(raw.slice(i, i + 4), where);
      i += 4;
    } else {
      out += SIMPLE_ESCAPES[escaped] ?? escaped;
    }
  }
  return out;
}

function decodeUnicodeEscape(hex: string, where: string): string {
  if (!/^[0-9A-Fa-f]{4}$/.test(hex)) {
    throw new ConfigError(`${where}: malformed \\uXXXX escape "\\u${hex}" (expected four hex digits)`);
  }
  return String.fromCharCode(Number.parseInt(hex, 16));
}
