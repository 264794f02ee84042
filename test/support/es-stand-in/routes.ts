import { parseBulk, runBulkItem } from './bulk.js';
import { DocumentStore, failure, isJsonObject, type JsonObject, type OperationResult, type WriteConditions } from './document-store.js';

export interface RouteInput {
  readonly method: string;
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
  readonly body: Buffer;
  readonly version: string;
  /** REST compatibility mode (`compatible-with=7` on Accept or Content-Type): Elasticsearch 8 serves the typed routes only then. */
  readonly compatibleWith7: boolean;
}

/** What Elasticsearch 8's RestCompatibleVersionHelper reads from the media-type headers. */
export function requestsCompatibleWith7(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return [headers.accept, headers['content-type']].some((value) => /compatible-with\s*=\s*"?\s*7(?![0-9])/i.test(String(value ?? '')));
}

/** What a request will do, known before it runs: the overlap detector needs the keys up front. */
export interface RoutePlan {
  readonly kind: 'read' | 'write';
  /** `index/id` of every document written (concrete index). */
  readonly writeKeys: readonly string[];
  execute(): OperationResult;
}

export function planRoute(store: DocumentStore, input: RouteInput): RoutePlan {
  const { method, segments } = input;
  const [first, second, third, fourth] = segments;
  const read = (execute: () => OperationResult): RoutePlan => ({ kind: 'read', writeKeys: [], execute });
  const write = (target: string, id: string, execute: () => OperationResult): RoutePlan => ({
    kind: 'write',
    writeKeys: [`${store.writeIndexOf(target)}/${id}`],
    execute,
  });

  if (first === undefined) return read(() => clusterInfo(input.version));
  if (first === '_bulk' && second === undefined && isMethod(method, 'POST', 'PUT')) return bulkPlan(store, input, undefined);
  if (first === '_search' && second === undefined) return read(() => search(store, undefined, input));
  if (first === '_refresh' || second === '_refresh') return read(() => ({ status: 200, body: { _shards: { total: 1, successful: 1, failed: 0 } } }));
  if (first === '_alias' && second !== undefined && isMethod(method, 'GET', 'HEAD')) return read(() => store.aliasAnswer(second));
  if (first === '_data_stream' && second !== undefined && isMethod(method, 'GET')) return read(() => store.dataStreamAnswer(second));
  if (first.startsWith('_')) return read(() => noHandler(input));

  const index = first;
  if (second === undefined) return indexLevel(store, index, input);
  if (second === '_alias' && third === undefined && isMethod(method, 'GET', 'HEAD')) return read(() => store.aliasesOfName(index));
  if (second === '_bulk' && third === undefined && isMethod(method, 'POST', 'PUT')) return bulkPlan(store, input, index);
  if (second === '_search' || second === '_count') return read(() => search(store, index, input, second === '_count'));
  if (second === '_update_by_query' && isMethod(method, 'POST')) return byQuery(store, index, 'updated');
  if (second === '_delete_by_query' && isMethod(method, 'POST')) return byQuery(store, index, 'deleted');
  if (second === '_create' && third !== undefined && fourth === undefined && isMethod(method, 'PUT', 'POST')) {
    return write(index, third, () => store.indexDocument(index, third, parseJson(input.body), 'create', conditionsOf(input.query)));
  }
  if (second === '_update' && third !== undefined && fourth === undefined && isMethod(method, 'POST')) {
    return write(index, third, () => store.updateDocument(index, third, parseJson(input.body)));
  }
  // `/{index}/_doc/...` and the typed routes of compatible-with=7 (`_doc` is just one type name).
  const type = second;
  if (type.startsWith('_') && type !== '_doc') return read(() => noHandler(input));
  const typedOnly = type !== '_doc' || fourth !== undefined || third === '_bulk';
  if (typedOnly && !input.compatibleWith7) return read(() => noHandler(input));
  if (third === undefined) {
    if (!isMethod(method, 'POST')) return read(() => noHandler(input));
    const autoId = `auto-${Math.random().toString(36).slice(2, 12)}`;
    return write(index, autoId, () => withType(type, store.indexDocument(index, autoId, parseJson(input.body), opTypeOf(input.query), conditionsOf(input.query))));
  }
  if (third === '_bulk' && fourth === undefined && isMethod(method, 'POST', 'PUT')) return bulkPlan(store, input, index);
  const id = third;
  if (fourth === '_create' && isMethod(method, 'PUT', 'POST')) {
    return write(index, id, () => withType(type, store.indexDocument(index, id, parseJson(input.body), 'create', conditionsOf(input.query))));
  }
  if (fourth === '_update' && isMethod(method, 'POST')) return write(index, id, () => withType(type, store.updateDocument(index, id, parseJson(input.body))));
  if (fourth !== undefined) return read(() => noHandler(input));
  if (isMethod(method, 'PUT', 'POST')) {
    return write(index, id, () => withType(type, store.indexDocument(index, id, parseJson(input.body), opTypeOf(input.query), conditionsOf(input.query))));
  }
  if (isMethod(method, 'DELETE')) return write(index, id, () => withType(type, store.deleteDocument(index, id, conditionsOf(input.query))));
  if (isMethod(method, 'GET', 'HEAD')) return read(() => withType(type, store.getDocument(index, id)));
  return read(() => noHandler(input));
}

function indexLevel(store: DocumentStore, index: string, input: RouteInput): RoutePlan {
  const execute = (): OperationResult => {
    if (isMethod(input.method, 'PUT')) {
      if (store.indexNames().includes(index)) return failure(400, 'resource_already_exists_exception', `index [${index}] already exists`, index);
      store.ensureIndex(index);
      return { status: 200, body: { acknowledged: true, shards_acknowledged: true, index } };
    }
    if (isMethod(input.method, 'DELETE')) {
      if (!store.deleteIndex(index)) return failure(404, 'index_not_found_exception', `no such index [${index}]`, index);
      return { status: 200, body: { acknowledged: true } };
    }
    if (isMethod(input.method, 'GET', 'HEAD')) {
      if (!store.indexNames().includes(store.writeIndexOf(index))) return failure(404, 'index_not_found_exception', `no such index [${index}]`, index);
      return { status: 200, body: { [store.writeIndexOf(index)]: { aliases: {}, mappings: {}, settings: {} } } };
    }
    return noHandler(input);
  };
  return { kind: 'read', writeKeys: [], execute };
}

function bulkPlan(store: DocumentStore, input: RouteInput, pathIndex: string | undefined): RoutePlan {
  const parsed = parseBulk(input.body, pathIndex);
  if (!Array.isArray(parsed)) return { kind: 'read', writeKeys: [], execute: () => parsed };
  return {
    kind: 'write',
    writeKeys: parsed.map((item) => `${store.writeIndexOf(item.target)}/${item.id}`),
    execute: () => {
      const started = performance.now();
      const items = parsed.map((item) => runBulkItem(store, item));
      const errors = items.some((item) => Object.values(item).some((entry) => isJsonObject(entry) && entry.error !== undefined));
      return { status: 200, body: { took: Math.round(performance.now() - started), errors, items } };
    },
  };
}

function byQuery(store: DocumentStore, index: string, outcome: 'updated' | 'deleted'): RoutePlan {
  const indices = store.readIndicesOf(index);
  return {
    kind: 'write',
    writeKeys: indices.flatMap((name) => [...store.documents(name).keys()].map((id) => `${name}/${id}`)),
    execute: () => {
      let total = 0;
      for (const name of indices) {
        for (const [id, document] of [...store.documents(name)]) {
          total += 1;
          if (outcome === 'deleted') store.deleteDocument(name, id);
          else store.indexDocument(name, id, document.source, 'index');
        }
      }
      return {
        status: 200,
        body: { took: 1, timed_out: false, total, updated: outcome === 'updated' ? total : 0, deleted: outcome === 'deleted' ? total : 0, batches: 1, version_conflicts: 0, noops: 0, retries: { bulk: 0, search: 0 }, failures: [] },
      };
    },
  };
}

function search(store: DocumentStore, expression: string | undefined, input: RouteInput, countOnly = false): OperationResult {
  const request = input.body.length > 0 ? parseJson(input.body) : {};
  const query = isJsonObject(request) && isJsonObject(request.query) ? request.query : { match_all: {} };
  const size = Number(input.query.get('size') ?? (isJsonObject(request) && typeof request.size === 'number' ? request.size : 10));
  const matched = store
    .readIndicesOf(expression)
    .flatMap((index) => [...store.documents(index)].map(([id, document]) => ({ _index: index, _id: id, _score: 1, _source: document.source })))
    .filter((hit) => matches(query, hit._id, hit._source));
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

function clusterInfo(version: string): OperationResult {
  return {
    status: 200,
    body: {
      name: 'es-stand-in',
      cluster_name: 'es-stand-in',
      cluster_uuid: 'c2FuZC1pbi1jbHVzdGVyLXV1aWQ',
      version: {
        number: version,
        build_flavor: 'default',
        build_type: 'docker',
        build_hash: 'stand-in',
        build_date: '2024-01-01T00:00:00.000Z',
        build_snapshot: false,
        lucene_version: '9.12.0',
        minimum_wire_compatibility_version: '7.17.0',
        minimum_index_compatibility_version: '7.0.0',
      },
      tagline: 'You Know, for Search',
    },
  };
}

function noHandler(input: RouteInput): OperationResult {
  const uri = `/${input.segments.map(encodeURIComponent).join('/')}`;
  return failure(400, 'illegal_argument_exception', `no handler found for uri [${uri}] and method [${input.method}]`);
}

function withType(type: string, result: OperationResult): OperationResult {
  if (type === '_doc' || result.error !== undefined) return result;
  return { ...result, body: { ...result.body, _type: type } };
}

function opTypeOf(query: URLSearchParams): 'index' | 'create' {
  return query.get('op_type') === 'create' ? 'create' : 'index';
}

function conditionsOf(query: URLSearchParams): WriteConditions {
  const ifSeqNo = query.get('if_seq_no');
  const ifPrimaryTerm = query.get('if_primary_term');
  return {
    ...(ifSeqNo !== null ? { ifSeqNo: Number(ifSeqNo) } : {}),
    ...(ifPrimaryTerm !== null ? { ifPrimaryTerm: Number(ifPrimaryTerm) } : {}),
  };
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function isMethod(method: string, ...allowed: string[]): boolean {
  return allowed.includes(method);
}
