/**
 * Time zones as `java.time.ZoneId.of` reads the ones index names use: `Z`, `UTC`/`GMT`/`UT` with or
 * without an offset, offsets (`+01`, `+0100`, `+01:00`, `-05:30:00`), and region ids (`Europe/Paris`),
 * whose rules come from the runtime's time zone database (Intl). Elasticsearch:
 * server/src/main/java/org/elasticsearch/common/time/DateUtils.java (`of`, which maps the
 * deprecated ids to their region and otherwise calls `ZoneId.of`).
 */
export interface Zone {
  readonly id: string;
  /** Offset from UTC in ms at `instantMs`. */
  offsetAt(instantMs: number): number;
}

const HOUR = 3_600_000;
const OFFSET = /^([+-])(\d{2})(?::?(\d{2})(?::?(\d{2}))?)?$/;
const SHORT_OFFSET = /^([+-])(\d)$/;

/** Throws `Error` with Java's message shape when the id is not a zone `ZoneId.of` accepts. */
export function zoneOf(id: string): Zone {
  if (id === 'Z') return fixed(id, 0);
  const prefixed = /^(UTC|GMT|UT)([+-].*)?$/.exec(id);
  if (prefixed !== null) return prefixed[2] === undefined ? fixed(id, 0) : fixed(id, offsetMs(prefixed[2], id));
  if (id.startsWith('+') || id.startsWith('-')) return fixed(id, offsetMs(id, id));
  return region(id);
}

function offsetMs(text: string, id: string): number {
  const short = SHORT_OFFSET.exec(text);
  const match = short === null ? OFFSET.exec(text) : [text, short[1], `0${short[2]}`];
  if (match === null) throw new Error(`Invalid ID for ZoneOffset, invalid format: ${id}`);
  const [, sign, hours, minutes, seconds] = match;
  const h = Number(hours);
  const m = Number(minutes ?? 0);
  const s = Number(seconds ?? 0);
  if (h > 18 || m > 59 || s > 59 || (h === 18 && (m > 0 || s > 0))) throw new Error(`Zone offset not in valid range: ${id}`);
  return (sign === '-' ? -1 : 1) * (h * HOUR + m * 60_000 + s * 1000);
}

function fixed(id: string, offset: number): Zone {
  return { id, offsetAt: () => offset };
}

function region(id: string): Zone {
  if (!/^[A-Za-z][A-Za-z0-9~/._+-]+$/.test(id)) throw new Error(`Invalid ID for region-based ZoneId, invalid format: ${id}`);
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone: id, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  } catch {
    throw new Error(`Unknown time-zone ID: ${id}`);
  }
  return {
    id,
    offsetAt(instantMs) {
      const parts = Object.fromEntries(format.formatToParts(new Date(instantMs)).map((part) => [part.type, part.value]));
      const local = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
      return local - (instantMs - (((instantMs % 1000) + 1000) % 1000));
    },
  };
}

/**
 * The instant of a local date-time in `zone`, as `ZonedDateTime.ofLocal` resolves it: in an
 * overlap the offset in use before (`preferredOffset`, else the earlier one), in a gap the local
 * time moved forward by the gap's length.
 */
export function instantOfLocal(localMs: number, zone: Zone, preferredOffset: number | null): number {
  const before = zone.offsetAt(localMs - 2 * 86_400_000);
  const after = zone.offsetAt(localMs + 2 * 86_400_000);
  const candidates = [...new Set([zone.offsetAt(localMs - before), zone.offsetAt(localMs - after), before, after])];
  const valid = candidates.filter((offset) => zone.offsetAt(localMs - offset) === offset).sort((a, b) => b - a);
  // A gap: the offset before the transition, which moves the local time later by the gap.
  if (valid.length === 0) return localMs - before;
  if (preferredOffset !== null && valid.includes(preferredOffset)) return localMs - preferredOffset;
  return localMs - (valid[0] ?? 0);
}
