import { matchName, type FilterPathNode } from './filter-path.js';

export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
export type JsonObject = { readonly [key: string]: Json };

/** What a filter says about one property: keep all of it, drop it, or look inside with these nodes. */
type Verdict = 'all' | 'none' | readonly FilterPathNode[];

const DROPPED = Symbol('dropped');
type Kept = Json | typeof DROPPED;

/**
 * `filter_path` applied to a composed answer the way Elasticsearch's JSON generator applies it:
 * the inclusion filter first, then the exclusion filter on what is left (two stacked Jackson
 * `FilteringGeneratorDelegate`s over `FilterPathBasedFilter`, path included, multiple matches).
 * The root object is always written, `{}` when nothing matched.
 */
export function filterJson(root: JsonObject, includes: FilterPathNode | null, excludes: FilterPathNode | null): JsonObject {
  let result = root;
  if (includes !== null) result = filterRoot(result, includes, true);
  if (excludes !== null) result = filterRoot(result, excludes, false);
  return result;
}

function filterRoot(root: JsonObject, filter: FilterPathNode, inclusive: boolean): JsonObject {
  const kept = filterMembers(root, [filter], inclusive);
  return kept === DROPPED ? {} : kept;
}

/**
 * Jackson's `writeFieldName` + `FilterPathBasedFilter.includeProperty`: a full match is
 * INCLUDE_ALL (inclusive) or excluded (exclusive); no match at all is the reverse; a partial
 * match continues with the nodes below.
 */
function verdictFor(nodes: readonly FilterPathNode[], name: string, inclusive: boolean): Verdict {
  const next: FilterPathNode[] = [];
  for (const node of nodes) {
    if (matchName(node, name, next)) return inclusive ? 'all' : 'none';
  }
  if (next.length > 0) return next;
  return inclusive ? 'none' : 'all';
}

/** The members of an object under a partial filter; DROPPED when none was written. */
function filterMembers(object: JsonObject, nodes: readonly FilterPathNode[], inclusive: boolean): JsonObject | typeof DROPPED {
  const out: Record<string, Json> = {};
  let written = false;
  for (const [name, value] of Object.entries(object)) {
    const verdict = verdictFor(nodes, name, inclusive);
    if (verdict === 'none') continue;
    const kept = verdict === 'all' ? value : filterValue(value, verdict, inclusive);
    if (kept === DROPPED) continue;
    out[name] = kept;
    written = true;
  }
  return written ? out : DROPPED;
}

/**
 * A value under a partial filter. Array elements are checked with the array's own filter (an
 * array is not a path level). Scalars are written only by exclusion filters (`_includeScalar`).
 * A container nothing was written into is dropped, except that an exclusion keeps one that was
 * empty to begin with (`includeEmptyObject`/`includeEmptyArray`, elastic/elasticsearch#109668).
 */
function filterValue(value: Json, nodes: readonly FilterPathNode[], inclusive: boolean): Kept {
  if (Array.isArray(value)) {
    const items = (value as readonly Json[]).map((item) => filterValue(item, nodes, inclusive)).filter((item) => item !== DROPPED);
    if (items.length > 0) return items;
    return !inclusive && value.length === 0 ? [] : DROPPED;
  }
  if (isObject(value)) {
    const members = filterMembers(value, nodes, inclusive);
    if (members !== DROPPED) return members;
    return !inclusive && Object.keys(value).length === 0 ? {} : DROPPED;
  }
  return inclusive ? DROPPED : value;
}

function isObject(value: Json): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
