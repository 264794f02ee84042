const UNIT_MULTIPLIERS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  p: 1024 ** 5,
  pb: 1024 ** 5,
};

const BYTE_SIZE = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/;

/**
 * Elasticsearch's byte-size syntax (`http.max_content_length: 100mb`): binary units b, kb, mb,
 * gb, tb, pb (also k, m, g, t, p), case-insensitive, optional space, fractions truncated to
 * whole bytes as Elasticsearch does. Unlike Elasticsearch, a bare number means bytes, because
 * the original properties file style is plain numbers. Returns null when the text is not one.
 */
export function parseByteSize(text: string): number | null {
  const match = BYTE_SIZE.exec(text.trim().toLowerCase());
  if (match === null) return null;
  const [, amount = '', unit = ''] = match;
  const multiplier = UNIT_MULTIPLIERS[unit];
  if (multiplier === undefined) return null;
  if (unit === '' && amount.includes('.')) return null;
  const bytes = Math.trunc(Number(amount) * multiplier);
  return Number.isSafeInteger(bytes) ? bytes : null;
}

/** The shortest exact spelling of a byte count (`104857600` -> `100mb`), for round-trips. */
export function formatByteSize(bytes: number): string {
  const units: ReadonlyArray<readonly [string, number]> = [
    ['pb', 1024 ** 5],
    ['tb', 1024 ** 4],
    ['gb', 1024 ** 3],
    ['mb', 1024 ** 2],
    ['kb', 1024],
  ];
  for (const [unit, size] of units) {
    if (bytes !== 0 && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return `${bytes}b`;
}
