import { restApiVersion } from '../elasticsearch-rules.js';
import { documentWrites, parseBulk, runBulk } from './bulk.js';
import { storedId, type DocumentStore } from './document-store.js';
import type { DocumentWrite } from './document-write.js';
import { failure, illegalArgument, indexNotFound, indexUuidOf, type OperationResult } from './es-errors.js';
import { dateMathRefusal } from './index-names.js';
import { getDocument, multiGet } from './reads.js';
import { search } from './search.js';
import { prepareDelete, prepareIndex, prepareUpdate, type PreparedWrite } from './single-writes.js';
import { NO_CONDITIONS } from './version-rules.js';
import { applyWrite, type WriteOutcome } from './write-engine.js';

export interface RouteInput {
  readonly method: string;
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
  readonly body: Buffer;
  readonly version: string;
  /** REST API version 7 (`requestsCompatibleWith7`): Elasticsearch 8 serves the typed routes only then. */
  readonly compatibleWith7: boolean;
  /** OpenSearch 2.17's `/_bulk/stream` and `/{index}/_bulk/stream`. */
  readonly streamingBulk?: boolean;
}

/**
 * Whether Elasticsearch 8 serves the request in REST API version 7, where its typed routes live
 * (RestCompatibleVersionHelper, through the reference model). A request whose headers Elasticsearch
 * refuses is served as version 7 when one of them names 7: more lenient than Elasticsearch, so an
 * unlocked typed write shows up as an overlap here rather than being hidden by a refusal.
 */
export function requestsCompatibleWith7(headers: Readonly<Record<string, string | string[] | undefined>>, hasContent: boolean): boolean {
  const version = restApiVersion(headerValues(headers.accept), headerValues(headers['content-type']), hasContent, 8);
  return version.refused ? version.asked.includes(7) : version.major === 7;
}

function headerValues(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : typeof value === 'string' ? [value] : value;
}

/** A document write of a request as applied: the write, its bulk position (null: single) and what it did. */
export interface AppliedDocumentWrite {
  readonly write: DocumentWrite;
  readonly item: number | null;
  readonly outcome: WriteOutcome;
}

export interface ReadPlan {
  readonly kind: 'read';
  readonly writeKeys: readonly string[];
  execute(): OperationResult;
}

export interface WritePlan {
  readonly kind: 'write';
  /** `index/id` of every document written (concrete index), known before the write is applied. */
  readonly writeKeys: readonly string[];
  /** Applies every write of the request in one synchronous step. */
  apply(): { readonly response: OperationResult; readonly writes: readonly AppliedDocumentWrite[] };
}

/**
 * What a request will do, known before it runs: the oracle needs the keys at arrival. Requests
 * Elasticsearch refuses before any shard sees them (parameter and validation errors) are answered
 * at once as reads: they write nothing.
 */
export type RoutePlan = ReadPlan | WritePlan;

export function planRoute(store: DocumentStore, input: RouteInput): RoutePlan {
  const { method, segments, query, body } = input;
  const [first, second, third, fourth] = segments;
  if (first === undefined) return read(() => clusterInfo(input.version));
  if (first === '_bulk' && second === undefined && isMethod(method, 'POST', 'PUT')) return bulkPlan(store, input, undefined);
  if (first === '_bulk' && isStreamingBulk(input, second, third)) return bulkPlan(store, input, undefined);
  if (first === '_mget' && second === undefined && isMethod(method, 'GET', 'POST')) return read(() => multiGet(store, undefined, body, query));
  if (first === '_search' && second === undefined) return read(() => search(store, undefined, body, query));
  if (first === '_refresh' || second === '_refresh') return read(() => ({ status: 200, body: { _shards: { total: 1, successful: 1, failed: 0 } } }));
  if (first === '_alias' && second !== undefined && isMethod(method, 'GET', 'HEAD')) return read(() => store.aliasAnswer(second));
  if (first === '_data_stream' && second !== undefined && isMethod(method, 'GET')) return read(() => store.dataStreamAnswer(second));
  if (first.startsWith('_')) return read(() => noHandler(input));

  const index = first;
  const single = (id: string | null): { target: string; id: string | null; query: URLSearchParams; body: Buffer } => ({ target: index, id, query, body });
  if (second === undefined) return indexLevel(store, index, input);
  if (second === '_alias' && third === undefined && isMethod(method, 'GET', 'HEAD')) return read(() => store.aliasesOfName(index));
  if (second === '_bulk' && third === undefined && isMethod(method, 'POST', 'PUT')) return bulkPlan(store, input, index);
  if (second === '_bulk' && isStreamingBulk(input, third, fourth)) return bulkPlan(store, input, index);
  // A bulk resolves its path's date math per item (each fails alone); every other route refuses the request.
  const refused = dateMathRefusal(index);
  if (refused !== null) return read(() => refused);
  if (second === '_mget' && third === undefined && isMethod(method, 'GET', 'POST')) return read(() => multiGet(store, index, body, query));
  if (second === '_search' || second === '_count') return read(() => search(store, index, body, query, second === '_count'));
  if (second === '_update_by_query' && isMethod(method, 'POST')) return byQuery(store, index, 'updated');
  if (second === '_delete_by_query' && isMethod(method, 'POST')) return byQuery(store, index, 'deleted');
  if (second === '_create' && third !== undefined && fourth === undefined && isMethod(method, 'PUT', 'POST')) {
    return singleWrite(store, prepareIndex(store, single(third), true), '_doc');
  }
  if (second === '_update' && third !== undefined && fourth === undefined && isMethod(method, 'POST')) {
    return singleWrite(store, prepareUpdate(store, single(third)), '_doc');
  }
  // `/{index}/_doc/...` and the typed routes of compatible-with=7 (`_doc` is just one type name).
  const type = second;
  if (type.startsWith('_') && type !== '_doc') return read(() => noHandler(input));
  const typedOnly = type !== '_doc' || fourth !== undefined || third === '_bulk';
  if (typedOnly && !input.compatibleWith7) return read(() => noHandler(input));
  if (third === undefined) {
    if (!isMethod(method, 'POST')) return read(() => noHandler(input));
    return singleWrite(store, prepareIndex(store, single(null), false), type);
  }
  if (third === '_bulk' && fourth === undefined && isMethod(method, 'POST', 'PUT')) return bulkPlan(store, input, index);
  const id = third;
  if (fourth === '_create' && isMethod(method, 'PUT', 'POST')) return singleWrite(store, prepareIndex(store, single(id), true), type);
  if (fourth === '_update' && isMethod(method, 'POST')) return singleWrite(store, prepareUpdate(store, single(id)), type);
  if (fourth !== undefined) return read(() => noHandler(input));
  if (isMethod(method, 'PUT', 'POST')) return singleWrite(store, prepareIndex(store, single(id), false), type);
  if (isMethod(method, 'DELETE')) return singleWrite(store, prepareDelete(store, single(id)), type);
  if (isMethod(method, 'GET', 'HEAD')) return read(() => withType(type, getDocument(store, index, id, query)));
  return read(() => noHandler(input));
}

function read(execute: () => OperationResult): ReadPlan {
  return { kind: 'read', writeKeys: [], execute };
}

function keyOf(write: DocumentWrite): string {
  return `${write.index}/${storedId(write.id)}`;
}

function singleWrite(store: DocumentStore, prepared: PreparedWrite, type: string): RoutePlan {
  if ('rejected' in prepared) return read(() => prepared.rejected);
  const { write } = prepared;
  return {
    kind: 'write',
    writeKeys: [keyOf(write)],
    apply: () => {
      const applied = applyWrite(store, write);
      return { response: withType(type, applied.response), writes: [{ write, item: null, outcome: applied.outcome }] };
    },
  };
}

function indexLevel(store: DocumentStore, index: string, input: RouteInput): RoutePlan {
  return read(() => {
    if (isMethod(input.method, 'PUT')) {
      if (store.hasIndex(index)) return failure(400, 'resource_already_exists_exception', `index [${index}/${indexUuidOf(index)}] already exists`, index);
      store.ensureIndex(index);
      return { status: 200, body: { acknowledged: true, shards_acknowledged: true, index } };
    }
    if (isMethod(input.method, 'DELETE')) {
      if (!store.deleteIndex(index)) return indexNotFound(index);
      return { status: 200, body: { acknowledged: true } };
    }
    if (isMethod(input.method, 'GET', 'HEAD')) {
      if (!store.hasIndex(store.writeIndexOf(index))) return indexNotFound(index);
      return { status: 200, body: { [store.writeIndexOf(index)]: { aliases: {}, mappings: {}, settings: {} } } };
    }
    return noHandler(input);
  });
}

function bulkPlan(store: DocumentStore, input: RouteInput, pathIndex: string | undefined): RoutePlan {
  const parsed = parseBulk(store, input.body, pathIndex, input.compatibleWith7, input.query.get('routing'));
  if (!Array.isArray(parsed)) return read(() => parsed);
  const writes = documentWrites(parsed);
  return {
    kind: 'write',
    writeKeys: writes.map((entry) => keyOf(entry.write)),
    apply: () => {
      const { response, outcomes } = runBulk(store, parsed);
      return {
        response,
        writes: writes.flatMap((entry, n) => {
          const outcome = outcomes[n];
          return outcome === undefined ? [] : [{ write: entry.write, item: parsed.indexOf(entry), outcome }];
        }),
      };
    },
  };
}

/** By-query writes reach every document of the index at their application instant (no version checks). */
function byQuery(store: DocumentStore, index: string, outcome: 'updated' | 'deleted'): RoutePlan {
  const indices = store.readIndicesOf(index);
  return {
    kind: 'write',
    writeKeys: indices.flatMap((name) => [...store.documents(name).keys()].map((id) => `${name}/${id}`)),
    apply: () => {
      const writes: AppliedDocumentWrite[] = [];
      for (const name of indices) {
        for (const [id, document] of [...store.documents(name)]) {
          const write: DocumentWrite = { action: outcome === 'deleted' ? 'delete' : 'index', target: name, index: name, id, body: outcome === 'deleted' ? null : document.source, update: null, conditions: NO_CONDITIONS };
          writes.push({ write, item: null, outcome: applyWrite(store, write).outcome });
        }
      }
      const total = writes.length;
      return {
        writes,
        response: {
          status: 200,
          body: { took: 1, timed_out: false, total, updated: outcome === 'updated' ? total : 0, deleted: outcome === 'deleted' ? total : 0, batches: 1, version_conflicts: 0, noops: 0, retries: { bulk: 0, search: 0 }, failures: [] },
        },
      };
    },
  };
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
  return illegalArgument(`no handler found for uri [${uri}] and method [${input.method}]`);
}

function withType(type: string, result: OperationResult): OperationResult {
  if (type === '_doc' || result.error !== undefined) return result;
  return { ...result, body: { ...result.body, _type: type } };
}

function isMethod(method: string, ...allowed: string[]): boolean {
  return allowed.includes(method);
}

function isStreamingBulk(input: RouteInput, stream: string | undefined, after: string | undefined): boolean {
  return input.streamingBulk === true && stream === 'stream' && after === undefined && isMethod(input.method, 'POST', 'PUT');
}
