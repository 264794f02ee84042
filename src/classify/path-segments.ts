import { ProxyError } from '../errors/proxy-error.js';

/**
 * The raw path (everything before the first `?`), exactly as Elasticsearch's `RestRequest.rawPath()`
 * takes it: no normalisation, a `#` stays part of the path.
 */
export function rawPathOf(rawUrl: string): string {
  const queryStart = rawUrl.indexOf('?');
  return queryStart < 0 ? rawUrl : rawUrl.slice(0, queryStart);
}

/** Java's `path.split("/")`: like JavaScript's split, minus every trailing empty string. */
export function javaSplitOnSlash(path: string): string[] {
  if (path === '') return [''];
  const parts = path.split('/');
  let end = parts.length;
  while (end > 0 && parts[end - 1] === '') end--;
  return parts.slice(0, end);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Percent-decodes one path segment like Elasticsearch's `RestUtils.decodeComponent`: a segment
 * without `%` is returned untouched; `+` stays `+`; `%%` is a literal `%` (an Elasticsearch quirk we
 * must share, or `a%%b` would lock a different key than the id Elasticsearch writes); any other `%`
 * needs two hex digits. Characters other than escapes contribute their low byte, as in Java.
 *
 * Divergence, on purpose: Java replaces invalid UTF-8 with U+FFFD and carries on; we answer 400,
 * because a replacement we compute differently from Java would lock another key than the document
 * Elasticsearch writes. Elasticsearch answers malformed escapes with 405 (it reports them through
 * its method-not-allowed path); we answer 400 — both are client errors, nothing is forwarded.
 */
export function decodePathSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  const bytes = new Uint8Array(segment.length);
  let length = 0;
  for (let i = 0; i < segment.length; i++) {
    const char = segment.charCodeAt(i);
    if (char !== 0x25 /* % */) {
      bytes[length++] = char & 0xff;
      continue;
    }
    if (i === segment.length - 1) throw badSegment(segment, 'unterminated escape sequence at end of segment');
    if (segment.charCodeAt(i + 1) === 0x25) {
      bytes[length++] = 0x25;
      i += 1;
      continue;
    }
    if (i + 1 === segment.length - 1) throw badSegment(segment, 'partial escape sequence at end of segment');
    const high = hexValue(segment.charCodeAt(i + 1));
    const low = hexValue(segment.charCodeAt(i + 2));
    if (high < 0 || low < 0) throw badSegment(segment, `invalid escape sequence \`%${segment.slice(i + 1, i + 3)}' at index ${i}`);
    bytes[length++] = high * 16 + low;
    i += 2;
  }
  try {
    return utf8.decode(bytes.subarray(0, length));
  } catch (cause) {
    throw badSegment(segment, 'the decoded bytes are not valid UTF-8', cause);
  }
}

function hexValue(char: number): number {
  if (char >= 0x30 && char <= 0x39) return char - 0x30;
  if (char >= 0x61 && char <= 0x66) return char - 0x61 + 10;
  if (char >= 0x41 && char <= 0x46) return char - 0x41 + 10;
  return -1;
}

function badSegment(segment: string, problem: string, cause?: unknown): ProxyError {
  return new ProxyError('BAD_REQUEST', `invalid percent-encoding in path segment [${segment}]: ${problem}`, {
    cause,
    meta: { segment },
  });
}
