/**
 * Elasticsearch's `Glob.globMatch`: `*` matches any run of characters (empty included), every
 * other character itself; no escapes, no `?`. Used for filter_path segments such as `err*`.
 */
export function globMatch(pattern: string, text: string): boolean {
  const star = pattern.indexOf('*');
  if (star === -1) return pattern === text;
  if (star > 0) return text.startsWith(pattern.slice(0, star)) && globMatch(pattern.slice(star), text.slice(star));
  const rest = pattern.slice(1);
  if (rest === '') return true;
  if (rest.startsWith('*')) return globMatch(rest, text);
  const nextStar = rest.indexOf('*');
  if (nextStar === -1) return text.endsWith(rest);
  const part = rest.slice(0, nextStar);
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + 1)) {
    if (globMatch(rest.slice(nextStar), text.slice(at + part.length))) return true;
  }
  return false;
}
