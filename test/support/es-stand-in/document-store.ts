import { randomBytes } from 'node:crypto';

export type JsonObject = Record<string, unknown>;

export interface StoredDocument {
  readonly source: JsonObject;
  readonly version: number;
  readonly seqNo: number;
  readonly primaryTerm: number;
}

/** Outcome of one document operation: HTTP status plus the body Elasticsearch would send. */
export interface OperationResult {
  readonly status: number;
  readonly body: JsonObject;
  /** Set for failures: the `error` object, without the wrapping. */
  readonly error?: JsonObject;
}

export interface WriteConditions {
  readonly ifSeqNo?: number;
  readonly ifPrimaryTerm?: number;
}

const SHARDS = Object.freeze({ total: 2, successful: 1, failed: 0 });
const PRIMARY_TERM = 1;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Documents, aliases and data streams of the stand-in cluster, with Elasticsearch's answers. */
export class DocumentStore {
  private readonly indices = new Map<string, Map<string, StoredDocument>>();
  private readonly seqNos = new Map<string, number>();
  private readonly aliases = new Map<string, { writeIndex: string; indices: string[] }>();
  private readonly dataStreams = new Map<string, string>();

  defineAlias(alias: string, writeIndex: string, otherIndices: readonly string[] = []): void {
    this.aliases.set(alias, { writeIndex, indices: [writeIndex, ...otherIndices] });
    for (const index of [writeIndex, ...otherIndices]) this.ensureIndex(index);
  }

  /** A data stream with one backing index; writes by id must use op_type=create. */
  defineDataStream(name: string): string {
    const backing = `.ds-${name}-2024.01.01-000001`;
    this.dataStreams.set(name, backing);
    this.ensureIndex(backing);
    return backing;
  }

  /** The concrete index a write to `name` lands in. */
  writeIndexOf(name: string): string {
    return this.aliases.get(name)?.writeIndex ?? this.dataStreams.get(name) ?? name;
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
      body[index] = { aliases: { [alias]: index === definition.writeIndex ? { is_write_index: true } : {} } };
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
    if (indices.length === 0) return failure(404, 'index_not_found_exception', `no such index [${name}]`, name);
    const body: JsonObject = {};
    for (const index of indices) {
      const aliases: JsonObject = {};
      for (const [alias, target] of this.aliases) {
        // As after a rollover: the write index flagged, the others explicitly not.
        if (target.indices.includes(index)) aliases[alias] = target.indices.length === 1 ? {} : { is_write_index: index === target.writeIndex };
      }
      body[index] = { aliases };
    }
    return { status: 200, body };
  }

  dataStreamAnswer(name: string): OperationResult {
    const backing = this.dataStreams.get(name);
    if (backing === undefined) return failure(404, 'index_not_found_exception', `no such index [${name}]`, name);
    return {
      status: 200,
      body: { data_streams: [{ name, timestamp_field: { name: '@timestamp' }, indices: [{ index_name: backing }], generation: 1, status: 'GREEN' }] },
    };
  }

  document(index: string, id: string): StoredDocument | undefined {
    return this.indices.get(this.writeIndexOf(index))?.get(id);
  }

  documents(index: string): ReadonlyMap<string, StoredDocument> {
    return this.indices.get(this.writeIndexOf(index)) ?? new Map();
  }

  indexNames(): string[] {
    return [...this.indices.keys()];
  }

  ensureIndex(index: string): Map<string, StoredDocument> {
    let documents = this.indices.get(index);
    if (documents === undefined) {
      documents = new Map();
      this.indices.set(index, documents);
    }
    return documents;
  }

  deleteIndex(index: string): boolean {
    return this.indices.delete(index);
  }

  /** index / create. `id` null generates one (auto-id). */
  indexDocument(target: string, id: string | null, source: unknown, opType: 'index' | 'create', conditions: WriteConditions = {}): OperationResult {
    if (!isJsonObject(source)) return failure(400, 'mapper_parsing_exception', 'failed to parse: the document must be a JSON object', target);
    if (this.isDataStream(target) && opType !== 'create') {
      return failure(400, 'illegal_argument_exception', `only write ops with an op_type of create are allowed in data streams`, target);
    }
    const index = this.writeIndexOf(target);
    const documentId = id ?? randomBytes(10).toString('base64url');
    const documents = this.ensureIndex(index);
    const existing = documents.get(documentId);
    if (opType === 'create' && existing !== undefined) {
      return conflict(index, documentId, `version conflict, document already exists (current version [${existing.version}])`);
    }
    const mismatch = this.conditionMismatch(index, documentId, existing, conditions);
    if (mismatch !== null) return mismatch;
    const stored = this.store(index, documentId, source, existing);
    return written(index, documentId, stored, existing === undefined ? 'created' : 'updated', existing === undefined ? 201 : 200);
  }

  /** Partial update: `doc` merged (objects deeply), `doc_as_upsert`, `upsert`. */
  updateDocument(target: string, id: string, request: unknown): OperationResult {
    if (!isJsonObject(request)) return failure(400, 'x_content_parse_exception', 'update request must be a JSON object', target);
    if (request.script !== undefined) return failure(400, 'illegal_argument_exception', 'the stand-in does not run scripts', target);
    const index = this.writeIndexOf(target);
    const documents = this.ensureIndex(index);
    const existing = documents.get(id);
    const partial = isJsonObject(request.doc) ? request.doc : null;
    if (existing === undefined) {
      const seed = request.doc_as_upsert === true ? partial : isJsonObject(request.upsert) ? request.upsert : null;
      if (seed === null) return failure(404, 'document_missing_exception', `[${id}]: document missing`, index, { shard: '0' });
      return written(index, id, this.store(index, id, seed, undefined), 'created', 201);
    }
    if (partial === null) return failure(400, 'action_request_validation_exception', 'Validation Failed: 1: script or doc is missing;', index);
    const merged = deepMerge(existing.source, partial);
    if (JSON.stringify(merged) === JSON.stringify(existing.source)) return written(index, id, existing, 'noop', 200);
    return written(index, id, this.store(index, id, merged, existing), 'updated', 200);
  }

  deleteDocument(target: string, id: string, conditions: WriteConditions = {}): OperationResult {
    const index = this.writeIndexOf(target);
    const documents = this.ensureIndex(index);
    const existing = documents.get(id);
    const mismatch = this.conditionMismatch(index, id, existing, conditions);
    if (mismatch !== null) return mismatch;
    const seqNo = this.nextSeqNo(index);
    if (existing === undefined) {
      return { status: 404, body: { _index: index, _id: id, _version: 1, result: 'not_found', _shards: SHARDS, _seq_no: seqNo, _primary_term: PRIMARY_TERM } };
    }
    documents.delete(id);
    const tombstone = { source: {}, version: existing.version + 1, seqNo, primaryTerm: PRIMARY_TERM };
    return written(index, id, tombstone, 'deleted', 200);
  }

  getDocument(target: string, id: string): OperationResult {
    const index = this.writeIndexOf(target);
    const existing = this.indices.get(index)?.get(id);
    if (existing === undefined) return { status: 404, body: { _index: index, _id: id, found: false } };
    return {
      status: 200,
      body: { _index: index, _id: id, _version: existing.version, _seq_no: existing.seqNo, _primary_term: existing.primaryTerm, found: true, _source: existing.source },
    };
  }

  private conditionMismatch(index: string, id: string, existing: StoredDocument | undefined, conditions: WriteConditions): OperationResult | null {
    if (conditions.ifSeqNo === undefined && conditions.ifPrimaryTerm === undefined) return null;
    const matches = existing !== undefined && existing.seqNo === conditions.ifSeqNo && existing.primaryTerm === (conditions.ifPrimaryTerm ?? PRIMARY_TERM);
    if (matches) return null;
    const current = existing === undefined ? 'document does not exist' : `current document has seqNo [${existing.seqNo}] and primary term [${existing.primaryTerm}]`;
    return conflict(index, id, `version conflict, required seqNo [${conditions.ifSeqNo}], primary term [${conditions.ifPrimaryTerm}]. ${current}`);
  }

  private store(index: string, id: string, source: JsonObject, previous: StoredDocument | undefined): StoredDocument {
    const stored = { source, version: (previous?.version ?? 0) + 1, seqNo: this.nextSeqNo(index), primaryTerm: PRIMARY_TERM };
    this.ensureIndex(index).set(id, stored);
    return stored;
  }

  private nextSeqNo(index: string): number {
    const next = (this.seqNos.get(index) ?? -1) + 1;
    this.seqNos.set(index, next);
    return next;
  }
}

function written(index: string, id: string, stored: StoredDocument, result: string, status: number): OperationResult {
  return {
    status,
    body: { _index: index, _id: id, _version: stored.version, result, _shards: SHARDS, _seq_no: stored.seqNo, _primary_term: stored.primaryTerm },
  };
}

export function failure(status: number, type: string, reason: string, index?: string, extra: JsonObject = {}): OperationResult {
  const error: JsonObject = { type, reason, ...(index !== undefined ? { index, index_uuid: 'stand-in-uuid' } : {}), ...extra };
  return { status, body: { error: { root_cause: [error], ...error }, status }, error };
}

function conflict(index: string, id: string, detail: string): OperationResult {
  return failure(409, 'version_conflict_engine_exception', `[${id}]: ${detail}`, index, { shard: '0' });
}

function deepMerge(base: JsonObject, patch: JsonObject): JsonObject {
  const merged: JsonObject = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const current = merged[key];
    merged[key] = isJsonObject(current) && isJsonObject(value) ? deepMerge(current, value) : value;
  }
  return merged;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}
