import type { DocumentStore } from './document-store.js';
import { errorResult, indexNotFound, isJsonObject, validationFailure, type JsonObject, type OperationResult } from './es-errors.js';

/**
 * Realtime reads by id, as Elasticsearch 8 answers them: `GET /{index}/_doc/{id}` and `_mget`.
 * Writes are applied atomically, so every read sees exactly the writes applied before it.
 */

/** `_source` filtering: false, true, or the top-level fields to keep / drop. */
interface SourceFilter {
  readonly fetch: boolean;
  readonly includes: readonly string[];
  readonly excludes: readonly string[];
}

const FULL_SOURCE: SourceFilter = { fetch: true, includes: [], excludes: [] };

/** `GET|HEAD /{index}/_doc/{id}`: 200 with `_seq_no`/`_primary_term`/`_version`, 404 `found: false`, 404 for a missing index. */
export function getDocument(store: DocumentStore, target: string, id: string, query: URLSearchParams): OperationResult {
  const answer = documentAnswer(store, target, id, sourceFilterOfQuery(query), query.get('routing'));
  if (answer.missingIndex !== null) return answer.missingIndex;
  return { status: answer.body.found === true ? 200 : 404, body: answer.body };
}

/**
 * `GET|POST /_mget` and `/{index}/_mget`, bodies `{"docs":[{"_index","_id","_source"?}]}` or
 * `{"ids":[…]}`: one answer per document in request order, each like a GET's body; a missing
 * index is that document's `error`, not the request's.
 */
export function multiGet(store: DocumentStore, pathIndex: string | undefined, body: Buffer, query: URLSearchParams): OperationResult {
  if (body.length === 0) return errorResult(400, { type: 'parse_exception', reason: 'request body or source parameter is required' });
  const request = parseJson(body);
  if (!isJsonObject(request)) return errorResult(400, { type: 'parse_exception', reason: 'Failed to derive xcontent' });
  const specs = docSpecsOf(request, pathIndex);
  const errors = specs.flatMap((spec, n) => [
    ...(spec.index === undefined ? [`index is missing for doc ${n}`] : []),
    ...(spec.id === undefined ? [`id is missing for doc ${n}`] : []),
  ]);
  if (specs.length === 0) errors.push('no documents to get');
  if (errors.length > 0) return validationFailure(errors);
  const defaultFilter = sourceFilterOfQuery(query);
  const docs = specs.map((spec) => {
    const routing = spec.routing ?? query.get('routing');
    const answer = documentAnswer(store, spec.index ?? '', spec.id ?? '', spec.source === undefined ? defaultFilter : sourceFilterOf(spec.source), routing);
    return answer.missingIndex === null ? answer.body : { _index: spec.index, _id: spec.id, error: answer.missingIndex.body.error };
  });
  return { status: 200, body: { docs } };
}

interface DocSpec {
  readonly index: string | undefined;
  readonly id: string | undefined;
  readonly source: unknown;
  readonly routing: string | null;
}

function docSpecsOf(request: JsonObject, pathIndex: string | undefined): DocSpec[] {
  if (Array.isArray(request.ids)) return request.ids.map((id) => ({ index: pathIndex, id: textOf(id), source: undefined, routing: null }));
  if (!Array.isArray(request.docs)) return [];
  return request.docs.map((doc) => {
    const fields = isJsonObject(doc) ? doc : {};
    return { index: textOf(fields._index) ?? pathIndex, id: textOf(fields._id), source: fields._source, routing: textOf(fields.routing) ?? null };
  });
}

/** A found / not-found document body, or the missing index's 404. */
function documentAnswer(store: DocumentStore, target: string, id: string, filter: SourceFilter, routing: string | null): { body: JsonObject; missingIndex: OperationResult | null } {
  const index = store.writeIndexOf(target);
  if (!store.hasIndex(index)) return { body: {}, missingIndex: indexNotFound(target) };
  // A read with another routing than the write's looks on another shard.
  const document = store.placement.readsSameShard(index, id, store.writeRoutingOf(target, routing)) ? store.document(index, id) : undefined;
  if (document === undefined) return { body: { _index: index, _id: id, found: false }, missingIndex: null };
  const body: JsonObject = { _index: index, _id: id, _version: document.version, _seq_no: document.seqNo, _primary_term: document.primaryTerm, found: true };
  if (filter.fetch) body._source = filtered(document.source, filter);
  return { body, missingIndex: null };
}

function filtered(source: JsonObject, filter: SourceFilter): JsonObject {
  const kept = filter.includes.length === 0 ? Object.entries(source) : Object.entries(source).filter(([field]) => filter.includes.includes(field));
  return Object.fromEntries(kept.filter(([field]) => !filter.excludes.includes(field)));
}

/** `_source`, `_source_includes`, `_source_excludes` query parameters (top-level field names only). */
function sourceFilterOfQuery(query: URLSearchParams): SourceFilter {
  const list = (name: string): string[] => (query.get(name) ?? '').split(',').filter((field) => field !== '');
  const source = query.get('_source');
  const base = source === null ? FULL_SOURCE : sourceFilterOf(source === 'true' || source === 'false' ? source === 'true' : source.split(','));
  return { fetch: base.fetch, includes: [...base.includes, ...list('_source_includes')], excludes: [...base.excludes, ...list('_source_excludes')] };
}

/** A document's `_source`: boolean, a field name, a list, or `{includes, excludes}`. */
function sourceFilterOf(value: unknown): SourceFilter {
  if (typeof value === 'boolean') return { ...FULL_SOURCE, fetch: value };
  if (typeof value === 'string') return { ...FULL_SOURCE, includes: [value] };
  if (Array.isArray(value)) return { ...FULL_SOURCE, includes: value.filter((field) => typeof field === 'string') };
  if (!isJsonObject(value)) return FULL_SOURCE;
  const names = (field: unknown): string[] => (Array.isArray(field) ? field.filter((name) => typeof name === 'string') : typeof field === 'string' ? [field] : []);
  return { fetch: true, includes: names(value.includes), excludes: names(value.excludes) };
}

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return typeof value === 'number' ? String(value) : undefined;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
