import type { DocumentStore } from './document-store.js';
import { isJsonObject, type JsonObject, type OperationResult } from './es-errors.js';

/**
 * `_search` and `_count` over the stand-in's documents: match_all, ids, term, match, exists and
 * bool on top-level fields, sorting and search_after — enough for tests to find what they wrote.
 */
export function search(store: DocumentStore, expression: string | undefined, body: Buffer, query: URLSearchParams, countOnly = false): OperationResult {
  const request = body.length > 0 ? parseJson(body) : {};
  const clause = isJsonObject(request) && isJsonObject(request.query) ? request.query : { match_all: {} };
  const size = Number(query.get('size') ?? (isJsonObject(request) && typeof request.size === 'number' ? request.size : 10));
  const matched = store
    .readIndicesOf(expression)
    .flatMap((index) => [...store.documents(index)].map(([id, document]) => ({ _index: index, _id: id, _score: 1, _source: document.source })))
    .filter((hit) => matches(clause, hit._id, hit._source));
  const shards = { total: 1, successful: 1, skipped: 0, failed: 0 };
  if (countOnly) return { status: 200, body: { count: matched.length, _shards: shards } };
  const sortFields = isJsonObject(request) ? sortFieldsOf(request.sort) : [];
  const hits = sortFields.length === 0 ? matched : sortedPage(matched, sortFields, isJsonObject(request) ? request.search_after : undefined);
  return {
    status: 200,
    body: { took: 1, timed_out: false, _shards: shards, hits: { total: { value: matched.length, relation: 'eq' }, max_score: hits.length > 0 ? 1 : null, hits: hits.slice(0, size) } },
  };
}

interface SortField {
  readonly field: string;
  readonly descending: boolean;
}

/** `sort: [{field: 'asc'}, {field: {order: 'desc'}}, 'field']` on top-level fields (stand-in subset). */
function sortFieldsOf(sort: unknown): SortField[] {
  const entries = Array.isArray(sort) ? sort : sort === undefined ? [] : [sort];
  return entries.flatMap((entry): SortField[] => {
    if (typeof entry === 'string') return [{ field: entry, descending: false }];
    if (!isJsonObject(entry)) return [];
    return Object.entries(entry).map(([field, spec]) => ({ field, descending: (isJsonObject(spec) ? spec.order : spec) === 'desc' }));
  });
}

type SortValue = string | number | boolean | null;

/** Hits in sort order, each with its `sort` values, starting after `search_after` when given. */
function sortedPage<T extends { _id: string; _source: JsonObject }>(hits: readonly T[], fields: readonly SortField[], after: unknown): (T & { sort: SortValue[] })[] {
  const withValues = hits.map((hit) => ({ ...hit, sort: fields.map(({ field }) => sortValueOf(field === '_id' ? hit._id : hit._source[field])) }));
  const order = (a: readonly SortValue[], b: readonly SortValue[]): number => {
    for (const [position, { descending }] of fields.entries()) {
      const compared = compareSortValues(a[position] ?? null, b[position] ?? null);
      if (compared !== 0) return descending ? -compared : compared;
    }
    return 0;
  };
  withValues.sort((a, b) => order(a.sort, b.sort));
  if (!Array.isArray(after)) return withValues;
  const afterValues = after.map(sortValueOf);
  return withValues.filter((hit) => order(hit.sort, afterValues) > 0);
}

function sortValueOf(value: unknown): SortValue {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : null;
}

/** Missing values sort last, as Elasticsearch's default `missing: _last`. */
function compareSortValues(a: SortValue, b: SortValue): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

/** match_all, ids, term, match, exists and bool on top-level fields: enough for tests to find what they wrote. */
function matches(query: JsonObject, id: string, source: JsonObject): boolean {
  if (isJsonObject(query.ids) && Array.isArray(query.ids.values)) return query.ids.values.includes(id);
  // A null value is not indexed: it does not "exist", as in Elasticsearch.
  if (isJsonObject(query.exists) && typeof query.exists.field === 'string') return source[query.exists.field] != null;
  if (isJsonObject(query.bool)) return matchesBool(query.bool, id, source);
  for (const kind of ['term', 'match']) {
    const clause = query[kind];
    if (!isJsonObject(clause)) continue;
    return Object.entries(clause).every(([field, expected]) => {
      const wanted = isJsonObject(expected) ? (expected.value ?? expected.query) : expected;
      return source[field] === wanted;
    });
  }
  return true;
}

/** `must`/`filter` all match, `must_not` none, `should` at least one when it is the only clause kind. */
function matchesBool(bool: JsonObject, id: string, source: JsonObject): boolean {
  const clauses = (name: string): JsonObject[] => {
    const value = bool[name];
    return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(isJsonObject);
  };
  const required = [...clauses('must'), ...clauses('filter')];
  const should = clauses('should');
  return (
    required.every((clause) => matches(clause, id, source)) &&
    !clauses('must_not').some((clause) => matches(clause, id, source)) &&
    (should.length === 0 || required.length > 0 || should.some((clause) => matches(clause, id, source)))
  );
}


function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
