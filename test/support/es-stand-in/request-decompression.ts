import { gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * A request body as Elasticsearch's HTTP layer hands it on: Netty's HttpContentDecompressor
 * inflates `gzip`/`x-gzip` and `deflate`/`x-deflate` (zlib-wrapped or raw, told apart by the first
 * two bytes as JdkZlibDecoder does), matched case-insensitively on the trimmed header, and passes
 * any other coding through undecoded (the handler then fails to parse it). A body that does not
 * decode is `corrupt`.
 */
export type DecodedBody = { readonly ok: true; readonly body: Buffer } | { readonly ok: false; readonly reason: string };

export function decodeRequestBody(headers: IncomingHttpHeaders, wire: Buffer): DecodedBody {
  const coding = (headers['content-encoding'] ?? '').trim().toLowerCase();
  if (wire.length === 0) return { ok: true, body: wire };
  try {
    if (coding === 'gzip' || coding === 'x-gzip') return { ok: true, body: gunzipSync(wire) };
    if (coding === 'deflate' || coding === 'x-deflate') return { ok: true, body: looksLikeZlib(wire) ? inflateSync(wire) : inflateRawSync(wire) };
  } catch (error) {
    return { ok: false, reason: `failed to decode [${coding}] content: ${(error as Error).message}` };
  }
  return { ok: true, body: wire };
}

function looksLikeZlib(body: Buffer): boolean {
  if (body.length < 2) return false;
  const header = body.readInt16BE(0);
  return (header & 0x7800) === 0x7800 && header % 31 === 0;
}
