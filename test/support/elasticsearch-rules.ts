/**
 * A reference model of the Elasticsearch rules that decide which document a request writes, written
 * from Elasticsearch's source independently of the proxy's code (tests hold the proxy to it, and the
 * stand-in reads its compatible-with version through it). Sources, in elastic/elasticsearch:
 * - libs/x-content/src/main/java/org/elasticsearch/xcontent/ParsedMediaType.java (parseMediaType)
 * - server/src/main/java/org/elasticsearch/rest/RestRequest.java (parseHeaderWithMediaType)
 * - server/src/main/java/org/elasticsearch/rest/RestCompatibleVersionHelper.java (getCompatibleVersion, parseVersion)
 * - server/src/main/java/org/elasticsearch/action/DocWriteRequest.java (validateDocIdLength: String.getBytes(UTF_8))
 * - server/src/main/java/org/elasticsearch/index/mapper/Uid.java (encodeId → Lucene UnicodeUtil.UTF16toUTF8)
 */

/** A header's values as the HTTP layer hands them over (several when the header was repeated). */
export type HeaderValues = readonly string[];

export type ApiVersion = { readonly refused: false; readonly major: number } | { readonly refused: true; readonly asked: readonly number[] };

interface ParsedHeader {
  readonly ok: boolean;
  /** Byte.parseByte of compatible-with; null: no parameter (or no header); NaN: it throws. */
  readonly version: number | null;
}

/** Java's Character.isWhitespace over the Latin-1 range an HTTP header can hold. */
const isWhitespace = (char: string): boolean => {
  const code = char.charCodeAt(0);
  return (code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x20);
};
/** Java's String.trim: characters up to U+0020 off both ends. */
const trim = (text: string): string => {
  const chars = [...text];
  while (chars.length > 0 && chars[0]!.charCodeAt(0) <= 0x20) chars.shift();
  while (chars.length > 0 && chars.at(-1)!.charCodeAt(0) <= 0x20) chars.pop();
  return chars.join('');
};
/** Java's String.split: trailing empty strings removed. */
const split = (text: string, separator: string): string[] => {
  const parts = text.split(separator);
  while (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  return parts.length === 1 && parts[0] === '' && text !== '' ? [] : parts;
};
const TCHAR = /^[a-zA-Z0-9!#$%&'*+\-.^_`|~]+$/;

function parseHeader(values: HeaderValues): ParsedHeader {
  if (values.length === 0) return { ok: true, version: null };
  const [value = ''] = values;
  if (values.length > 1 || [...value].every(isWhitespace)) return { ok: false, version: null };
  if (value.includes(',') || value === '*/*') return { ok: true, version: null };
  const elements = split(value.toLowerCase(), ';');
  const type = split(elements[0] ?? '', '/');
  if (type.length !== 2 || !TCHAR.test(trim(type[0]!)) || !TCHAR.test(trim(type[1]!))) return { ok: false, version: null };
  let version: number | null = null;
  for (const element of elements.slice(1)) {
    const parameter = trim(element);
    if (parameter === '') continue;
    const pair = split(parameter, '=');
    if (pair.length !== 2) return { ok: false, version: null };
    const [name, raw] = pair as [string, string];
    if (name === '' || raw === '' || isWhitespace(name.at(-1)!) || isWhitespace(raw[0]!)) return { ok: false, version: null };
    if (trim(name) === 'compatible-with') version = parseByte(trim(raw));
  }
  return { ok: true, version };
}

/** Java's Byte.parseByte (radix 10): NaN where it throws NumberFormatException. */
function parseByte(text: string): number {
  const match = /^([+-]?)([0-9]+)$/.exec(text);
  if (match === null) return NaN;
  const value = Number(match[2]!.replace(/^0+(?=.)/, '')) * (match[1] === '-' ? -1 : 1);
  return value >= -128 && value <= 127 ? value : NaN;
}

/**
 * The REST API version Elasticsearch of major `current` serves a request with, or that it refuses it
 * (then `asked` lists the versions its headers name, for a lenient stand-in).
 */
export function restApiVersion(accept: HeaderValues, contentType: HeaderValues, hasContent: boolean, current: number): ApiVersion {
  const a = parseHeader(accept);
  const c = parseHeader(contentType);
  const asked = [a.version, c.version].filter((v): v is number => v !== null && !Number.isNaN(v));
  const refused: ApiVersion = { refused: true, asked };
  if (!a.ok || !c.ok || Number.isNaN(a.version) || Number.isNaN(c.version)) return refused;
  const minimum = current - 1;
  const acceptVersion = a.version ?? current;
  const contentVersion = c.version ?? current;
  if (acceptVersion > current || acceptVersion < minimum) return refused;
  if (hasContent) {
    if (contentVersion > current || contentVersion < minimum) return refused;
    if (contentVersion !== acceptVersion) return refused;
    if ((a.version === null) !== (c.version === null)) return refused;
  }
  return { refused: false, major: acceptVersion < current ? minimum : current };
}

/** `id.getBytes(StandardCharsets.UTF_8).length`: Java's encoder writes `?` for an unpaired surrogate. */
export function javaUtf8Length(id: string): number {
  let length = 0;
  for (const char of id) {
    const code = char.codePointAt(0)!;
    length += code >= 0xd800 && code <= 0xdfff ? 1 : code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return length;
}

/** The UTF-8 bytes Lucene stores for an id (Uid.encodeUtf8Id; other encodings of Uid are injective too): an unpaired surrogate is EF BF BD. */
export function storedIdBytes(id: string): Buffer {
  return Buffer.concat([...id].map((char) => {
    const code = char.codePointAt(0)!;
    return code >= 0xd800 && code <= 0xdfff ? Buffer.from([0xef, 0xbf, 0xbd]) : Buffer.from(char, 'utf8');
  }));
}

/** Whether Elasticsearch refuses an id for this action (IndexRequest/UpdateRequest validate; DeleteRequest does not). */
export function refusesId(action: 'index' | 'create' | 'update' | 'delete', id: string): boolean {
  return action !== 'delete' && javaUtf8Length(id) > 512;
}
