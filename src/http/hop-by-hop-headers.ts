import type { IncomingHttpHeaders } from 'node:http';

/**
 * Headers that describe one connection rather than the message (RFC 9110 §7.6.1), plus the
 * legacy `proxy-connection` and `keep-alive`. A proxy must not forward them: the upstream
 * connection is the proxy's own keep-alive socket with its own framing.
 */
const ALWAYS_HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Names listed in `Connection` are hop-by-hop for this message too. */
function connectionListed(headers: IncomingHttpHeaders): Set<string> {
  const value = headers.connection;
  const listed = new Set<string>();
  if (value === undefined) return listed;
  for (const name of String(value).split(',')) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed !== '') listed.add(trimmed);
  }
  return listed;
}

export function isHopByHop(name: string, listed: ReadonlySet<string> = new Set()): boolean {
  const lower = name.toLowerCase();
  return ALWAYS_HOP_BY_HOP.has(lower) || listed.has(lower);
}

/** A copy of `headers` without hop-by-hop ones (names are lower-case, as Node parses them). */
export function withoutHopByHop(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const listed = connectionListed(headers);
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || isHopByHop(name, listed)) continue;
    kept[name] = value;
  }
  return kept;
}

/**
 * `rawHeaders` (`[name, value, name, value, ...]`, original case and repetitions kept, so
 * several `set-cookie` survive) without hop-by-hop ones, nor the lower-case names in `alsoDrop`.
 */
export function rawWithoutHopByHop(
  rawHeaders: readonly string[],
  headers: IncomingHttpHeaders,
  alsoDrop: readonly string[] = [],
): string[] {
  const listed = connectionListed(headers);
  for (const name of alsoDrop) listed.add(name);
  const kept: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    if (isHopByHop(name, listed)) continue;
    kept.push(name, rawHeaders[i + 1] ?? '');
  }
  return kept;
}
