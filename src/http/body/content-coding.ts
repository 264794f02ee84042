import { ProxyError } from '../../errors/proxy-error.js';

/** A content coding the proxy can take off a request body, as Elasticsearch's HTTP layer does. */
export type ContentCoding = 'gzip' | 'deflate';

/** The codings a request body may carry, for the `Accept-Encoding` hint of a refusal. */
export const ACCEPTED_CODINGS = 'gzip, deflate';

/**
 * The coding a request's `Content-Encoding` header names, `null` for none or `identity`. Matches
 * Netty's HttpContentDecompressor, which Elasticsearch puts in front of every request: the trimmed
 * value compared case-insensitively with `gzip`, `x-gzip`, `deflate` and `x-deflate`. Anything else
 * — `br`, `zstd`, an unknown token, or codings stacked in one header or in several — Elasticsearch
 * does not decode (it then parses the compressed bytes and fails); the proxy, which must read the
 * body to lock it, refuses it with UNSUPPORTED_CONTENT_ENCODING instead.
 */
export function contentCodingOf(header: string | readonly string[] | undefined): ContentCoding | null {
  if (header === undefined) return null;
  if (typeof header !== 'string') {
    if (header.length > 1) throw unsupported(header.join(', '));
    return contentCodingOf(header[0]);
  }
  const value = header.trim().toLowerCase();
  switch (value) {
    case '':
    case 'identity':
      return null;
    case 'gzip':
    case 'x-gzip':
      return 'gzip';
    case 'deflate':
    case 'x-deflate':
      return 'deflate';
    default:
      throw unsupported(header);
  }
}

function unsupported(value: string): ProxyError {
  return new ProxyError(
    'UNSUPPORTED_CONTENT_ENCODING',
    `Content-Encoding [${value}] is not supported: this proxy reads the body of this request and decodes only [${ACCEPTED_CODINGS}] (one coding, not stacked)`,
    { meta: { contentEncoding: value } },
  );
}
