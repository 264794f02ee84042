import { HOP_BY_HOP_HEADERS } from './hop-by-hop.js';

/**
 * Drops the hop-by-hop headers (`HOP_BY_HOP_HEADERS`) and the names `Connection` lists: a proxy must
 * not forward them, each connection has its own framing and keep-alive.
 *
 * `raw` is `[name, value, ...]` as received (original case and order, repeated headers such as
 * `set-cookie` kept); the result keeps that form, minus hop-by-hop headers and the lower-case names
 * in `alsoDrop`. Reads the raw list only: Node builds a message's header object lazily, and relaying
 * needs none. (Request headers going upstream: `forwarder/upstream-headers.ts`.)
 */
export function rawWithoutHopByHop(raw: readonly string[], alsoDrop: readonly string[] = []): string[] {
  const kept: string[] = [];
  let listed: string[] | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    const lower = name.toLowerCase();
    if (HOP_BY_HOP_HEADERS.has(lower)) {
      if (lower === 'connection') listed = (listed ?? ([] as string[])).concat((raw[i + 1] ?? '').toLowerCase().split(',').map((token) => token.trim()));
      continue;
    }
    if (alsoDrop.length > 0 && alsoDrop.includes(lower)) continue;
    kept.push(name, raw[i + 1] ?? '');
  }
  if (listed === null) return kept;
  const names = listed;
  const filtered: string[] = [];
  for (let i = 0; i + 1 < kept.length; i += 2) {
    if (!names.includes((kept[i] ?? '').toLowerCase())) filtered.push(kept[i] ?? '', kept[i + 1] ?? '');
  }
  return filtered;
}
