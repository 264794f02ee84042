import { DateMathError } from './date-math-error.js';

/** The fields a pattern prints, read from a local date-time. */
export interface LocalFields {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millisecond: number;
}

export type DatePrinter = (fields: LocalFields) => string;

/** Letters the proxy prints as `java.time.format.DateTimeFormatter.ofPattern` does, with the widths it accepts. */
const NUMERIC_FIELDS: Readonly<Record<string, { readonly maxWidth: number; readonly read: (fields: LocalFields) => number }>> = {
  M: { maxWidth: 2, read: (fields) => fields.month },
  d: { maxWidth: 2, read: (fields) => fields.day },
  H: { maxWidth: 2, read: (fields) => fields.hour },
  m: { maxWidth: 2, read: (fields) => fields.minute },
  s: { maxWidth: 2, read: (fields) => fields.second },
};

/** Java reserves these outside quotes (`[`/`]` open optional sections, which the proxy does not print). */
const RESERVED = new Set(['#', '{', '}', '[', ']']);

/**
 * Compiles the subset of Java's DateTimeFormatter patterns that date-math index names use:
 * `u`/`y` (year), `M`, `d`, `H`, `m`, `s` (one or two letters), `S` (fraction), quoted text and any
 * other non-letter as a literal. Everything else — text fields (`MMM`, `EEE`), week fields (`Y`, `w`,
 * whose meaning depends on the locale's week rules), named formats (`date`, `basic_date`) — is
 * refused with an error naming the letter: the proxy would rather not lock on a name it can only
 * guess. Elasticsearch: server/src/main/java/org/elasticsearch/common/time/DateFormatter.java
 * (`forPattern`), JDK java.time.format.DateTimeFormatterBuilder (`appendPattern`).
 */
export function compileDatePattern(pattern: string): DatePrinter {
  const parts: DatePrinter[] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern.charAt(i);
    if (c === "'") {
      const end = quotedEnd(pattern, i);
      const text = pattern.slice(i + 1, end).replaceAll("''", "'");
      parts.push(() => (end === i + 1 ? "'" : text));
      i = end + 1;
      continue;
    }
    if (RESERVED.has(c)) throw DateMathError.unsupported(`date format [${pattern}] uses the reserved character [${c}]`);
    if (!/[A-Za-z]/.test(c)) {
      parts.push(() => c);
      i++;
      continue;
    }
    let count = 1;
    while (pattern.charAt(i + count) === c) count++;
    parts.push(letterPrinter(c, count, pattern));
    i += count;
  }
  return (fields) => parts.map((part) => part(fields)).join('');
}

function quotedEnd(pattern: string, start: number): number {
  if (pattern.charAt(start + 1) === "'") return start + 1;
  for (let j = start + 1; j < pattern.length; j++) {
    if (pattern.charAt(j) !== "'") continue;
    if (pattern.charAt(j + 1) === "'") {
      j++;
      continue;
    }
    return j;
  }
  throw DateMathError.unsupported(`date format [${pattern}] has an unterminated quote`);
}

function letterPrinter(letter: string, count: number, pattern: string): DatePrinter {
  if (letter === 'y' || letter === 'u') return yearPrinter(count);
  if (letter === 'S') return (fields) => String(fields.millisecond).padStart(3, '0').padEnd(count, '0').slice(0, count);
  const field = NUMERIC_FIELDS[letter];
  if (field === undefined || count > field.maxWidth) {
    throw DateMathError.unsupported(`date format [${pattern}] uses [${letter.repeat(count)}], which the proxy does not evaluate (supported: u, y, M, MM, d, dd, H, HH, m, mm, s, ss, S)`);
  }
  return (fields) => String(field.read(fields)).padStart(count, '0');
}

/** `yy`: the last two digits; `y`, `yyy`: the year as is (padded to 3); four or more: padded to that width. */
function yearPrinter(count: number): DatePrinter {
  if (count === 2) return (fields) => String(fields.year % 100).padStart(2, '0');
  return (fields) => String(fields.year).padStart(count === 1 ? 1 : count, '0');
}
