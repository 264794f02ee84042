import type { ForwardRequest } from '../upstream-forwarder.js';
import type { UpstreamHost } from './host-pool.js';
import { HOP_BY_HOP_HEADERS } from '../hop-by-hop.js';

/**
 * The request headers sent upstream, as a raw `[name, value, ...]` list in the client's order
 * and case: minus hop-by-hop ones (RFC 9110 §7.6.1, plus the names `Connection` lists), minus
 * `Expect` (the proxy answers `100 Continue` itself) and the proxy's own headers; `Host` names
 * the upstream node (a name-routed cluster such as Elastic Cloud needs it). Framing is the
 * proxy's: a held body is described by its length (replacing any chunked framing the client
 * used); a streamed body keeps the client's length, and one the client chunked carries no length,
 * for undici to send it chunked (undici refuses a Transfer-Encoding header: it frames bodies itself).
 * One pass over the raw list: no header object is built for a request the proxy only forwards.
 */
export interface UpstreamHead {
  readonly headers: string[];
  /** A streamed request with framing (a length other than 0, or chunked): its body must be piped. */
  readonly streamsBody: boolean;
}

export function upstreamRequestHeaders(request: ForwardRequest, host: UpstreamHost): UpstreamHead {
  const raw = request.rawHeaders;
  const drop = request.dropHeaders;
  const kept: string[] = [];
  let listed: string[] | null = null;
  let contentLength: string | null = null;
  let chunked = false;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    const value = raw[i + 1] ?? '';
    const lower = name.toLowerCase();
    switch (lower) {
      case 'connection':
        listed = (listed ?? ([] as string[])).concat(value.toLowerCase().split(',').map((token) => token.trim()));
        continue;
      case 'content-length':
        contentLength = value;
        continue;
      case 'transfer-encoding':
        chunked = true;
        continue;
      // Rebuilt for this hop: the upstream host's own name; undici answers `100-continue` itself.
      case 'host':
      case 'expect':
        continue;
    }
    if (HOP_BY_HOP_HEADERS.has(lower)) continue;
    if (drop !== undefined && drop.includes(lower)) continue;
    kept.push(name, value);
  }
  const headers = listed === null ? kept : withoutListed(kept, listed);
  headers.push('Host', host.hostHeader);
  const { body } = request;
  if (Buffer.isBuffer(body)) {
    if (body.length > 0 || contentLength !== null || chunked) headers.push('Content-Length', String(body.length));
    return { headers, streamsBody: false };
  }
  // Transfer-Encoding wins over Content-Length (RFC 9112 §6.3), as Node's parser reads the body.
  if (!chunked && contentLength !== null) headers.push('Content-Length', contentLength);
  return { headers, streamsBody: chunked || (contentLength !== null && contentLength !== '0') };
}

function withoutListed(raw: readonly string[], listed: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? '';
    if (!listed.includes(name.toLowerCase())) kept.push(name, raw[i + 1] ?? '');
  }
  return kept;
}
