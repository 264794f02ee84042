import { ProxyError } from '../errors/proxy-error.js';

export type BulkMediaType =
  | 'application/json'
  | 'application/x-ndjson'
  | 'application/vnd.elasticsearch+json'
  | 'application/vnd.elasticsearch+x-ndjson';

export interface BulkContentType {
  readonly mediaType: BulkMediaType;
  /** The `compatible-with` version of a vendor type, `null` for the plain types. */
  readonly compatibleWith: number | null;
}

const PLAIN_TYPES: readonly BulkMediaType[] = ['application/json', 'application/x-ndjson'];
const VENDOR_TYPES: readonly BulkMediaType[] = ['application/vnd.elasticsearch+json', 'application/vnd.elasticsearch+x-ndjson'];
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Checks the Content-Type of a `_bulk` body the way Elasticsearch's RestController does before the
 * bulk handler runs, and returns the parsed type:
 * - an empty body is not checked (Elasticsearch skips the check without content and then answers
 *   400 "request body is required", which `parseBulkBody` reproduces);
 * - a missing header with a body → 406 "Content-Type header is missing" (as Elasticsearch);
 * - a syntactically broken header → 400 "Invalid media-type value on headers [Content-Type]";
 * - anything but JSON / NDJSON and their vendor forms → 406 "Content-Type header [..] is not
 *   supported". Elasticsearch would also take SMILE for bulk; its 0xFF-separated framing is not
 *   parsed here, so it is refused rather than forwarded without locks.
 * Parameters: `charset` must be UTF-8; vendor types need a numeric `compatible-with` and plain types
 * must not carry one (Elasticsearch then fails to resolve the type and answers 406 too).
 */
export function checkBulkContentType(header: string | readonly string[] | undefined, bodyLength: number): BulkContentType | null {
  if (bodyLength === 0) return null;
  const value = typeof header === 'string' ? header : header?.[0];
  if (value === undefined || value.trim() === '') {
    throw new ProxyError('UNSUPPORTED_CONTENT_TYPE', 'Content-Type header is missing');
  }
  const parsed = parseMediaType(value);
  const contentType = parsed === null ? null : bulkContentTypeOf(parsed);
  if (contentType === null) {
    throw new ProxyError('UNSUPPORTED_CONTENT_TYPE', `Content-Type header [${value}] is not supported`);
  }
  return contentType;
}

interface ParsedMediaType {
  readonly type: string;
  readonly parameters: ReadonlyMap<string, string>;
}

function parseMediaType(value: string): ParsedMediaType | null {
  const [typePart = '', ...parameterParts] = value.split(';');
  const type = typePart.trim().toLowerCase();
  const [main, sub, ...rest] = type.split('/');
  if (main === undefined || sub === undefined || rest.length > 0 || !TOKEN.test(main) || !TOKEN.test(sub)) throw invalidHeader();
  const parameters = new Map<string, string>();
  for (const part of parameterParts) {
    if (part.trim() === '') continue;
    const separator = part.indexOf('=');
    if (separator < 0) throw invalidHeader();
    const name = part.slice(0, separator).trim().toLowerCase();
    const raw = part.slice(separator + 1).trim();
    const unquoted = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
    if (!TOKEN.test(name) || unquoted === '') throw invalidHeader();
    parameters.set(name, unquoted);
  }
  return { type, parameters };
}

function bulkContentTypeOf({ type, parameters }: ParsedMediaType): BulkContentType | null {
  const mediaType = [...PLAIN_TYPES, ...VENDOR_TYPES].find((known) => known === type);
  if (mediaType === undefined) return null;
  const isVendor = VENDOR_TYPES.includes(mediaType);
  let compatibleWith: number | null = null;
  for (const [name, value] of parameters) {
    if (name === 'charset' && value.toLowerCase() === 'utf-8') continue;
    // XContentType registers `\d+` for the vendor types; the version itself is read as a byte (compatibility.ts).
    if (name === 'compatible-with' && isVendor && /^[0-9]+$/.test(value)) {
      compatibleWith = Number(value);
      continue;
    }
    return null;
  }
  if (isVendor && compatibleWith === null) return null;
  return { mediaType, compatibleWith };
}

function invalidHeader(): ProxyError {
  return new ProxyError('BAD_REQUEST', 'Invalid media-type value on headers [Content-Type]');
}
