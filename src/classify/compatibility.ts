import type { IncomingHttpHeaders } from 'node:http';
import type { RouteVersion } from './es-route-trie.js';
import { parseMediaTypeHeader, type MediaTypeHeader } from './media-type.js';

/** What one header asks for: a REST API major version, none, or something Elasticsearch refuses. */
export type CompatibleWith = number | 'none' | 'unreadable';

const COMPATIBLE_WITH = 'compatible-with';

/**
 * The `compatible-with` parameter of one Accept or Content-Type header, as Elasticsearch reads it.
 *
 * Elasticsearch: server/src/main/java/org/elasticsearch/rest/RestCompatibleVersionHelper.java
 * (parseVersion) takes the parameter from any media type, vendor or not, and reads it with Java's
 * `Byte.parseByte`: an optional sign, then decimal digits, leading zeros allowed (`07` is 7, `+7`
 * is 7), within -128..127; anything else throws and the request is never dispatched. Quotes are not
 * removed (`"7"` is no number). The vendor media types additionally register the pattern `\d+`
 * (libs/x-content/src/main/java/org/elasticsearch/xcontent/XContentType.java), which only decides
 * whether a Content-Type is a readable body type; it does not change the version.
 */
export function compatibleWithOf(header: string | readonly string[] | undefined): CompatibleWith {
  return versionOf(parseMediaTypeHeader(header));
}

function versionOf(header: MediaTypeHeader): CompatibleWith {
  if (header.kind === 'malformed') return 'unreadable';
  if (header.kind === 'none') return 'none';
  const value = header.parameters.get(COMPATIBLE_WITH);
  if (value === undefined) return 'none';
  return javaParseByte(value) ?? 'unreadable';
}

/** `Byte.parseByte(value)` (radix 10); null where Java throws NumberFormatException. */
function javaParseByte(value: string): number | null {
  if (!/^[+-]?[0-9]+$/.test(value)) return null;
  const parsed = Number(value);
  return parsed >= -128 && parsed <= 127 ? parsed : null;
}

/**
 * Which route table a request is matched against: the 7.x typed routes (`v7`) or the current ones.
 *
 * Elasticsearch (RestCompatibleVersionHelper.getCompatibleVersion) takes the version from Accept;
 * with a body, Content-Type must name the same version or the request is refused with 400. So in
 * every request Elasticsearch serves, the version is Accept's, and it is 7 exactly when Accept
 * asks for 7 (8.x serves 7 and 8; 9.x serves 8 and 9, so 7 is refused there).
 *
 * The proxy answers `v7` in those cases and also wherever Elasticsearch refuses the request (a
 * Content-Type asking for 7 that Accept does not match, a header it cannot read): a request nothing
 * is written for may be locked, but a typed write must never pass unlocked. The typed routes only
 * add write routes to the current ones, so `v7` never turns a current write into a pass-through.
 */
export function routeVersionOf(headers: IncomingHttpHeaders): RouteVersion {
  const accept = compatibleWithOf(headers.accept);
  const contentType = compatibleWithOf(headers['content-type']);
  return asksFor7(accept) || asksFor7(contentType) ? 'v7' : 'current';
}

function asksFor7(version: CompatibleWith): boolean {
  return version === 7 || version === 'unreadable';
}
