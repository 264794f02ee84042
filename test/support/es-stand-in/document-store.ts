import { storedIdBytes } from '../elasticsearch-rules.js';
import { resolveDateMathName } from '../../../src/classify/date-math/date-math-index-name.js';
import { indexNotFound, type JsonObject, type OperationResult } from './es-errors.js';
import { ShardPlacement } from './routing.js';
import { PRIMARY_TERM, type CurrentVersion } from './version-rules.js';

export interface StoredDocument {
  readonly source: JsonObject;
  readonly version: number;
  readonly seqNo: number;
  readonly primaryTerm: number;
}

interface Tombstone {
  readonly version: number;
  readonly seqNo: number;
  readonly primaryTerm: number;
  /** `now()` when the delete was applied. */
  readonly deletedAt: number;
}

interface IndexState {
  readonly documents: Map<string, StoredDocument>;
  readonly tombstones: Map<string, Tombstone>;
  /** Last sequence number given out: the index is one shard, so one counter is Elasticsearch's per-shard one. */
  seqNo: number;
}

export interface DocumentStoreOptions {
  /** `index.gc_deletes`: how long a delete's tombstone keeps its version (Elasticsearch: 60 s). */
  readonly gcDeletesMs: number;
  readonly now?: () => number;
}

/**
 * Documents, delete tombstones, sequence numbers, aliases and data streams of the stand-in
 * cluster. Holds data only; the write rules live in `write-engine.ts`.
 *
 * Tombstones: Elasticsearch keeps a deleted id's version (and seq_no) in its version map for
 * `index.gc_deletes` and prunes it at the next refresh after that; here a tombstone is simply
 * forgotten once `gcDeletesMs` have passed since the delete (checked when the id is looked up).
 */
export class DocumentStore {
  private readonly indices = new Map<string, IndexState>();
  /** `writeIndex` null: an alias with several indices and none flagged (Elasticsearch refuses writes through it). */
  private readonly aliases = new Map<string, { writeIndex: string | null; indices: string[]; flagged: boolean; indexRouting: string | null }>();
  readonly placement = new ShardPlacement();
  private readonly dataStreams = new Map<string, string>();
  private readonly gcDeletesMs: number;
  private readonly now: () => number;

  constructor(options: DocumentStoreOptions) {
    this.gcDeletesMs = options.gcDeletesMs;
    this.now = options.now ?? (() => performance.now());
  }

  defineAlias(alias: string, writeIndex: string, otherIndices: readonly string[] = [], indexRouting: string | null = null): void {
    this.aliases.set(alias, { writeIndex, indices: [writeIndex, ...otherIndices], flagged: true, indexRouting });
    for (const index of [writeIndex, ...otherIndices]) this.ensureIndex(index);
  }

  /**
   * An alias defined without `is_write_index` on any of its indices, listed as `{}` by `GET /_alias`
   * as Elasticsearch lists it. Its only index is its write index; with several it has none.
   */
  defineUnflaggedAlias(alias: string, indices: readonly string[]): void {
    this.aliases.set(alias, { writeIndex: indices.length === 1 ? (indices[0] ?? null) : null, indices: [...indices], flagged: false, indexRouting: null });
    for (const index of indices) this.ensureIndex(index);
  }

  /** A data stream with one backing index; writes by id must use op_type=create. */
  defineDataStream(name: string): string {
    const backing = `.ds-${name}-2024.01.01-000001`;
    this.dataStreams.set(name, backing);
    this.ensureIndex(backing);
    return backing;
  }

  /**
   * The concrete index a write to `name` lands in: date math resolved on this clock (Elasticsearch
   * resolves it on the coordinating node), then an alias's write index or a data stream's backing index.
   */
  writeIndexOf(name: string): string {
    const concrete = resolveDateMathName(name, Date.now());
    return this.aliases.get(concrete)?.writeIndex ?? this.dataStreams.get(concrete) ?? concrete;
  }

  /** The routing a write to `name` goes with: an alias's `index_routing` in place of the request's. */
  writeRoutingOf(name: string, routing: string | null): string | null {
    return this.aliases.get(resolveDateMathName(name, Date.now()))?.indexRouting ?? routing;
  }

  /** An alias Elasticsearch refuses writes through: it has no write index. */
  isAliasWithoutWriteIndex(name: string): boolean {
    return this.aliases.get(name)?.writeIndex === null;
  }

  isDataStream(name: string): boolean {
    return this.dataStreams.has(name);
  }

  /** Concrete indices named by a read expression: comma list, `*` wildcards, aliases, `_all`. */
  readIndicesOf(expression: string | undefined): string[] {
    const names = expression === undefined || expression === '_all' ? ['*'] : expression.split(',');
    const found = new Set<string>();
    for (const name of names) {
      if (this.aliases.has(name)) this.aliases.get(name)?.indices.forEach((index) => found.add(index));
      else if (this.dataStreams.has(name)) found.add(this.writeIndexOf(name));
      else if (name.includes('*')) {
        const pattern = new RegExp(`^${name.split('*').map(escapeRegExp).join('.*')}$`);
        for (const index of this.indices.keys()) if (pattern.test(index)) found.add(index);
      } else found.add(name);
    }
    return [...found];
  }

  aliasAnswer(alias: string): OperationResult {
    const definition = this.aliases.get(alias);
    if (definition === undefined) return { status: 404, body: { error: `alias [${alias}] missing`, status: 404 } };
    const body: JsonObject = {};
    for (const index of definition.indices) {
      body[index] = { aliases: { [alias]: { ...(definition.flagged && index === definition.writeIndex ? { is_write_index: true } : {}), ...routingFields(definition.indexRouting) } } };
    }
    return { status: 200, body };
  }

  /**
   * `GET /{name}/_alias`: for an alias, every index behind it with its aliases; for a concrete
   * index, that index with the aliases that include it; 404 for a name that does not exist.
   */
  aliasesOfName(name: string): OperationResult {
    const definition = this.aliases.get(name);
    const indices = definition !== undefined ? definition.indices : this.indices.has(name) ? [name] : [];
    if (indices.length === 0) return indexNotFound(name);
    const body: JsonObject = {};
    for (const index of indices) {
      const aliases: JsonObject = {};
      for (const [alias, target] of this.aliases) {
        // As after a rollover: the write index flagged, the others explicitly not.
        if (!target.indices.includes(index)) continue;
        aliases[alias] = { ...(target.indices.length === 1 || !target.flagged ? {} : { is_write_index: index === target.writeIndex }), ...routingFields(target.indexRouting) };
      }
      body[index] = { aliases };
    }
    return { status: 200, body };
  }

  dataStreamAnswer(name: string): OperationResult {
    const backing = this.dataStreams.get(name);
    if (backing === undefined) return indexNotFound(name);
    return {
      status: 200,
      body: { data_streams: [{ name, timestamp_field: { name: '@timestamp' }, indices: [{ index_name: backing }], generation: 1, status: 'GREEN' }] },
    };
  }

  /** The live document (an index, alias or data stream name resolves to its write index). */
  document(index: string, requestId: string): StoredDocument | undefined {
    const id = storedId(requestId);
    return this.indices.get(this.writeIndexOf(index))?.documents.get(id);
  }

  documents(index: string): ReadonlyMap<string, StoredDocument> {
    return this.indices.get(this.writeIndexOf(index))?.documents ?? new Map<string, StoredDocument>();
  }

  indexNames(): string[] {
    return [...this.indices.keys()];
  }

  hasIndex(index: string): boolean {
    return this.indices.has(index);
  }

  ensureIndex(index: string): void {
    if (!this.indices.has(index)) this.indices.set(index, { documents: new Map(), tombstones: new Map(), seqNo: -1 });
  }

  deleteIndex(index: string): boolean {
    return this.indices.delete(index);
  }

  /**
   * Empties every index holding more than `limit` documents (documents and tombstones; the index and
   * its sequence numbers stay). Returns how many documents went.
   */
  forgetDocumentsBeyond(limit: number): number {
    let forgotten = 0;
    for (const state of this.indices.values()) {
      if (state.documents.size <= limit) continue;
      forgotten += state.documents.size;
      state.documents.clear();
      state.tombstones.clear();
    }
    return forgotten;
  }

  /** What the engine's version map says of `id` in the concrete `index` right now (null: nothing). */
  currentVersion(index: string, requestId: string): CurrentVersion | null {
    const id = storedId(requestId);
    const state = this.indices.get(index);
    const live = state?.documents.get(id);
    if (live !== undefined) return { version: live.version, seqNo: live.seqNo, primaryTerm: live.primaryTerm, deleted: false };
    const tombstone = state?.tombstones.get(id);
    if (tombstone === undefined) return null;
    if (this.now() - tombstone.deletedAt >= this.gcDeletesMs) {
      state?.tombstones.delete(id);
      return null;
    }
    return { version: tombstone.version, seqNo: tombstone.seqNo, primaryTerm: tombstone.primaryTerm, deleted: true };
  }

  /** Stores `source` as `id`'s new revision with the next sequence number (creates the index). */
  put(index: string, requestId: string, source: JsonObject, version: number): StoredDocument {
    const id = storedId(requestId);
    const state = this.state(index);
    const stored = { source, version, seqNo: this.nextSeqNo(state), primaryTerm: PRIMARY_TERM };
    state.tombstones.delete(id);
    state.documents.set(id, stored);
    return stored;
  }

  /** Deletes `id` (present or not), leaving a tombstone with `version` and the next sequence number. */
  tombstone(index: string, requestId: string, version: number): { readonly seqNo: number; readonly primaryTerm: number } {
    const id = storedId(requestId);
    const state = this.state(index);
    const tombstone = { version, seqNo: this.nextSeqNo(state), primaryTerm: PRIMARY_TERM, deletedAt: this.now() };
    state.documents.delete(id);
    state.tombstones.set(id, tombstone);
    return tombstone;
  }

  private state(index: string): IndexState {
    this.ensureIndex(index);
    const state = this.indices.get(index);
    if (state === undefined) throw new Error(`index [${index}] vanished`);
    return state;
  }

  private nextSeqNo(state: IndexState): number {
    state.seqNo += 1;
    return state.seqNo;
  }
}

/** As `GET /_alias` lists an alias's routing. */
function routingFields(indexRouting: string | null): JsonObject {
  return indexRouting === null ? {} : { index_routing: indexRouting, search_routing: indexRouting };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Documents are kept under the id Lucene stores (Uid.encodeId): ids that differ only in unpaired
 * surrogates are one document, as in Elasticsearch's single-shard index.
 */
export function storedId(requestId: string): string {
  return /[\ud800-\udfff]/.test(requestId) ? storedIdBytes(requestId).toString('utf8') : requestId;
}
