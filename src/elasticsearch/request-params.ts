/** Parameters that only shape how an answer is written: dropped from sub-requests whose answers the proxy merges. */
export const PRESENTATION_PARAMS: ReadonlySet<string> = new Set(['filter_path', 'pretty']);

/**
 * Query parameters as Elasticsearch reads them (RestUtils.decodeQueryString): the query is split
 * on `&`, a name runs to the first `=`, both parts are percent-decoded with `+` as a space, and
 * the last of repeated names wins. A part that does not decode is skipped here (Elasticsearch
 * would refuse the request; the upstream does that for what it receives).
 */
export function queryParams(url: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const part of queryParts(url)) {
    const parsed = parsePart(part);
    if (parsed !== null) params.set(parsed.name, parsed.value);
  }
  return params;
}

/** `url` without the parameters named (byte for byte otherwise); no `?` when nothing is left. */
export function withoutParams(url: string, names: ReadonlySet<string>): string {
  const question = url.indexOf('?');
  if (question === -1) return url;
  const kept = queryParts(url).filter((part) => {
    const name = parsePart(part)?.name;
    return name === undefined || !names.has(name);
  });
  const path = url.slice(0, question);
  return kept.length === 0 ? path : `${path}?${kept.join('&')}`;
}

function queryParts(url: string): string[] {
  const question = url.indexOf('?');
  if (question === -1) return [];
  return url
    .slice(question + 1)
    .split('&')
    .filter((part) => part !== '');
}

function parsePart(part: string): { name: string; value: string } | null {
  const equals = part.indexOf('=');
  const name = decode(equals > 0 ? part.slice(0, equals) : part);
  const value = equals > 0 ? decode(part.slice(equals + 1)) : '';
  return name === null || value === null ? null : { name, value };
}

function decode(component: string): string | null {
  try {
    return decodeURIComponent(component.replaceAll('+', ' '));
  } catch {
    return null;
  }
}
