/**
 * Accept and Content-Type read the way Elasticsearch reads them, because the compatible-with
 * parameter they carry decides which routes (and so which writes) a request has.
 *
 * Elasticsearch: libs/x-content/src/main/java/org/elasticsearch/xcontent/ParsedMediaType.java
 * (parseMediaType) and server/src/main/java/org/elasticsearch/rest/RestRequest.java
 * (parseHeaderWithMediaType). Its quirks are kept on purpose, since a tidier parser would read some
 * header differently from the cluster: values are lower-cased before splitting, a value holding a
 * comma anywhere (a list or a range) or exactly `*` `/` `*` counts as no header, quotes are not
 * removed, `name = value` with spaces around `=` is malformed, a repeated parameter keeps its last
 * value, and Java's `String.split` drops trailing empty pieces (`application/json/` is valid).
 */

export type MediaTypeHeader =
  /** No such header, or one Elasticsearch ignores (a media range, a comma-separated list, `*` `/` `*`). */
  | { readonly kind: 'none' }
  | { readonly kind: 'parsed'; readonly type: string; readonly parameters: ReadonlyMap<string, string> }
  /** Elasticsearch answers 400 for the whole request (malformed, empty, or sent more than once). */
  | { readonly kind: 'malformed' };

const NONE: MediaTypeHeader = Object.freeze({ kind: 'none' });
const MALFORMED: MediaTypeHeader = Object.freeze({ kind: 'malformed' });

/** RFC 7230 tchar, as ParsedMediaType's TCHAR_PATTERN. */
const TCHAR = /^[a-zA-Z0-9!#$%&'*+\-.^_`|~]+$/;

/**
 * One header as Node hands it over. Node joins a repeated Accept with `, ` (Elasticsearch refuses a
 * repeated header; the joined value holds a comma, which reads as no header: the request is
 * refused either way) and keeps the first of repeated Content-Types.
 */
export function parseMediaTypeHeader(value: string | readonly string[] | undefined): MediaTypeHeader {
  if (value === undefined) return NONE;
  const values = typeof value === 'string' ? [value] : value;
  if (values.length === 0) return NONE;
  const [only] = values;
  if (values.length > 1 || only === undefined || !hasText(only)) return MALFORMED;
  return parseMediaType(only);
}

function parseMediaType(value: string): MediaTypeHeader {
  if (value.includes(',') || value === '*/*') return NONE;
  const elements = javaSplit(value.toLowerCase(), ';');
  const typeParts = javaSplit(elements[0] ?? '', '/');
  const [main = '', sub = ''] = typeParts.map(javaTrim);
  // `;` alone splits into nothing: Java then fails on elements[0], which is no media type either.
  if (elements.length === 0 || typeParts.length !== 2 || !TCHAR.test(main) || !TCHAR.test(sub)) return MALFORMED;
  const parameters = new Map<string, string>();
  for (const element of elements.slice(1)) {
    const parameter = javaTrim(element);
    if (parameter === '') continue;
    const pair = javaSplit(parameter, '=');
    const [name, raw] = pair;
    if (pair.length !== 2 || name === undefined || raw === undefined || endsWithSpace(name) || startsWithSpace(raw)) return MALFORMED;
    parameters.set(javaTrim(name), javaTrim(raw));
  }
  return { kind: 'parsed', type: `${main}/${sub}`, parameters };
}

/** Java's `String.split` for a one-character separator: trailing empty strings removed ("" stays [""]). */
function javaSplit(text: string, separator: string): string[] {
  if (text === '') return [''];
  const parts = text.split(separator);
  let end = parts.length;
  while (end > 0 && parts[end - 1] === '') end--;
  return parts.slice(0, end);
}

/** Java's `String.trim`: every character up to U+0020 at both ends. */
function javaTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}

/** ParsedMediaType's hasTrailingSpace / hasLeadingSpace: an empty side counts as a space. */
function endsWithSpace(text: string): boolean {
  return text === '' || isJavaWhitespace(text.charCodeAt(text.length - 1));
}

function startsWithSpace(text: string): boolean {
  return text === '' || isJavaWhitespace(text.charCodeAt(0));
}

/** Strings.hasText: some character that is not whitespace. */
function hasText(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!isJavaWhitespace(text.charCodeAt(i))) return true;
  return false;
}

/** `Character.isWhitespace`: space separators other than no-break spaces, and \t \n \v \f \r, U+001C..U+001F. */
function isJavaWhitespace(code: number): boolean {
  if ((code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x20)) return true;
  if (code === 0x1680 || code === 0x2028 || code === 0x2029 || code === 0x205f || code === 0x3000) return true;
  return code >= 0x2000 && code <= 0x200a && code !== 0x2007;
}
