import { DateMathError } from './date-math-error.js';
import type { DatePrinter, LocalFields } from './java-date-pattern.js';
import { instantOfLocal, type Zone } from './zone-offset.js';

const DAY = 86_400_000;

/**
 * Evaluates `now` followed by date math (`-1d`, `/M`, `+2h/h` …) in `zone` and prints the result, as
 * Elasticsearch's JavaDateMathParser.parse/parseMath does with roundUp false: date units (y, M, w,
 * d) and rounding change the local date-time and keep the offset where they can
 * (`ZonedDateTime` rules), time units (h, H, m, s) move the instant. Elasticsearch:
 * server/src/main/java/org/elasticsearch/common/time/JavaDateMathParser.java.
 */
export function evaluateNowMath(math: string, nowMs: number, zone: Zone, printer: DatePrinter): string {
  if (math.length === 0) throw DateMathError.invalid('cannot parse empty date');
  if (!math.startsWith('now')) {
    throw DateMathError.unsupported(`date math [${math}] does not start with [now]: the proxy evaluates date-math index names relative to now only`);
  }
  let instant = nowMs;
  const operations = math.slice('now'.length);
  let i = 0;
  while (i < operations.length) {
    const c = operations.charAt(i++);
    const round = c === '/';
    if (!round && c !== '+' && c !== '-') throw DateMathError.invalid(`operator not supported for date math [${operations}]`);
    if (i >= operations.length) throw DateMathError.invalid(`truncated date math [${operations}]`);
    let num = 1;
    const numStart = i;
    if (isDigit(operations.charAt(i))) {
      while (i < operations.length && isDigit(operations.charAt(i))) i++;
      if (i >= operations.length) throw DateMathError.invalid(`truncated date math [${operations}]`);
      num = Number(operations.slice(numStart, i));
      if (num > 2_147_483_647) throw DateMathError.unsupported(`date math [${operations}] has a number beyond Java's int`);
    } else if (/\p{Nd}/u.test(operations.charAt(i))) {
      throw DateMathError.unsupported(`date math [${operations}] has non-ASCII digits`);
    }
    if (round && num !== 1) throw DateMathError.invalid(`rounding \`/\` can only be used on single unit types [${operations}]`);
    const unit = operations.charAt(i++);
    const amount = (c === '-' ? -1 : 1) * num;
    instant = applyUnit(instant, zone, unit, round, amount, () => `${operations.slice(numStart, i - 1)}${unit}`);
  }
  return printer(fieldsOf(instant, zone));
}

function applyUnit(instant: number, zone: Zone, unit: string, round: boolean, amount: number, unitText: () => string): number {
  switch (unit) {
    case 'y':
      return onLocal(instant, zone, (f) => (round ? { ...f, month: 1, day: 1, ...MIDNIGHT } : plusMonths(f, amount * 12)));
    case 'M':
      return onLocal(instant, zone, (f) => (round ? { ...f, day: 1, ...MIDNIGHT } : plusMonths(f, amount)));
    case 'w':
      return onLocal(instant, zone, (f) => (round ? { ...plusDays(f, -((weekday(f) + 6) % 7)), ...MIDNIGHT } : plusDays(f, amount * 7)));
    case 'd':
      return onLocal(instant, zone, (f) => (round ? { ...f, ...MIDNIGHT } : plusDays(f, amount)));
    case 'h':
    case 'H':
      return round ? onLocal(instant, zone, (f) => ({ ...f, minute: 0, second: 0, millisecond: 0 })) : instant + amount * 3_600_000;
    case 'm':
      return round ? onLocal(instant, zone, (f) => ({ ...f, second: 0, millisecond: 0 })) : instant + amount * 60_000;
    case 's':
      return round ? onLocal(instant, zone, (f) => ({ ...f, millisecond: 0 })) : instant + amount * 1000;
    default:
      throw DateMathError.invalid(`unit [${unit}] not supported for date math [${unitText()}]`);
  }
}

const MIDNIGHT = { hour: 0, minute: 0, second: 0, millisecond: 0 } as const;

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

/** Changes the local date-time and resolves it back to an instant as `ZonedDateTime` does (keeping the offset in an overlap). */
function onLocal(instant: number, zone: Zone, change: (fields: LocalFields) => LocalFields): number {
  const offset = zone.offsetAt(instant);
  return instantOfLocal(localMsOf(change(fieldsOf(instant, zone))), zone, offset);
}

export function fieldsOf(instant: number, zone: Zone): LocalFields {
  const local = new Date(instant + zone.offsetAt(instant));
  const fields = {
    year: local.getUTCFullYear(),
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
    millisecond: local.getUTCMilliseconds(),
  };
  if (!(fields.year >= 1 && fields.year <= 9999)) throw DateMathError.unsupported(`date math reaches the year [${fields.year}], outside 1 to 9999`);
  return fields;
}

function localMsOf(f: LocalFields): number {
  const date = new Date(0);
  date.setUTCFullYear(f.year, f.month - 1, f.day);
  date.setUTCHours(f.hour, f.minute, f.second, f.millisecond);
  return date.getTime();
}

/** `LocalDate.plusMonths`: the day is clamped to the new month's length. */
function plusMonths(f: LocalFields, months: number): LocalFields {
  const total = f.year * 12 + (f.month - 1) + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12 + 1;
  const length = month === 2 ? (isLeap(year) ? 29 : 28) : MONTH_LENGTHS[month - 1] ?? 31;
  return { ...f, year, month, day: Math.min(f.day, length) };
}

const MONTH_LENGTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function plusDays(f: LocalFields, days: number): LocalFields {
  const moved = new Date(localMsOf({ ...f, ...MIDNIGHT }) + days * DAY);
  return { ...f, year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() };
}

/** 0 for Sunday … 6 for Saturday. */
function weekday(f: LocalFields): number {
  return new Date(localMsOf({ ...f, ...MIDNIGHT })).getUTCDay();
}
