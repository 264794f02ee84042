import type { DocumentStore, StoredDocument } from './document-store.js';
import type { DocumentWrite, UpdateSpec } from './document-write.js';
import { documentMissing, failure, illegalArgument, indexNotFound, isJsonObject, versionConflict, type JsonObject, type OperationResult } from './es-errors.js';
import { noWriteIndexRefusal } from './index-names.js';
import { conflictOf, MATCH_DELETED, nextVersion, NO_CONDITIONS, type CurrentVersion } from './version-rules.js';

/** What one write did to its document, for the history. */
export interface WriteOutcome {
  readonly status: number;
  /** `result` of a write that went through (created, updated, deleted, noop, not_found); null on an error. */
  readonly result: string | null;
  /** `error.type` of a write that failed. */
  readonly error: string | null;
  readonly version: number | null;
  readonly seqNo: number | null;
  readonly primaryTerm: number | null;
  /** The document once the write was applied (null: absent or deleted). */
  readonly source: JsonObject | null;
}

export interface AppliedOperation {
  readonly response: OperationResult;
  readonly outcome: WriteOutcome;
}

const SHARDS = Object.freeze({ total: 2, successful: 1, failed: 0 });
const NOOP_SHARDS = Object.freeze({ total: 0, successful: 0, failed: 0 });

/**
 * Applies one validated write at once, as the primary shard's engine does: the concurrency
 * checks and the change happen in the same synchronous step, so nothing can come between them.
 */
export function applyWrite(store: DocumentStore, write: DocumentWrite): AppliedOperation {
  if (store.isAliasWithoutWriteIndex(write.target)) return failed(store, write, noWriteIndexRefusal(write.target));
  const applied = applyOperation(store, write);
  if (store.document(write.index, write.id) !== undefined) store.placement.place(write.index, write.id, write.routing ?? null);
  return applied;
}

function applyOperation(store: DocumentStore, write: DocumentWrite): AppliedOperation {
  switch (write.action) {
    case 'index':
    case 'create':
      return applyIndex(store, write);
    case 'delete':
      return applyDelete(store, write);
    case 'update':
      return applyUpdate(store, write);
  }
}

function applyIndex(store: DocumentStore, write: DocumentWrite): AppliedOperation {
  const { index, id, body } = write;
  if (store.isDataStream(write.target) && write.action !== 'create') {
    return failed(store, write, illegalArgument('only write ops with an op_type of create are allowed in data streams'));
  }
  if (!isJsonObject(body)) return failed(store, write, failure(400, 'mapper_parsing_exception', 'failed to parse: the document must be a JSON object', index));
  store.ensureIndex(index);
  const current = store.currentVersion(index, id);
  const conflict = conflictOf(write.conditions, current);
  if (conflict !== null) return failed(store, write, versionConflict(index, id, conflict));
  const stored = store.put(index, id, body, nextVersion(write.conditions, current));
  return written(index, id, stored, absent(current) ? 'created' : 'updated');
}

function applyDelete(store: DocumentStore, write: DocumentWrite): AppliedOperation {
  const { index, id, conditions } = write;
  // Elasticsearch creates no index for a delete, unless it carries an external version.
  if (!store.hasIndex(index) && conditions.versionType === 'internal') return failed(store, write, indexNotFound(index));
  store.ensureIndex(index);
  const current = store.currentVersion(index, id);
  const conflict = conflictOf(conditions, current);
  if (conflict !== null) return failed(store, write, versionConflict(index, id, conflict));
  const version = nextVersion(conditions, current);
  const tombstone = store.tombstone(index, id, version);
  const found = !absent(current);
  const body = { _index: index, _id: id, _version: version, result: found ? 'deleted' : 'not_found', _shards: SHARDS, _seq_no: tombstone.seqNo, _primary_term: tombstone.primaryTerm };
  return {
    response: { status: found ? 200 : 404, body },
    outcome: { status: found ? 200 : 404, result: body.result, error: null, version, seqNo: tombstone.seqNo, primaryTerm: tombstone.primaryTerm, source: null },
  };
}

/** Get, merge and index in one step (Elasticsearch's `UpdateHelper` + a compare-and-write on the seq_no it read). */
function applyUpdate(store: DocumentStore, write: DocumentWrite): AppliedOperation {
  const { index, id } = write;
  const spec: UpdateSpec = write.update ?? { doc: null, upsert: null, docAsUpsert: false, detectNoop: true, script: undefined, retryOnConflict: 0 };
  store.ensureIndex(index);
  const current = store.currentVersion(index, id);
  const existing = store.document(index, id);
  if (absent(current) || existing === undefined) return upsert(store, write, spec, current);
  const conflict = conflictOf(write.conditions, current);
  if (conflict !== null) return failed(store, write, versionConflict(index, id, conflict));
  if (spec.script !== undefined || spec.doc === null) return failed(store, write, illegalArgument('the stand-in does not run update scripts'));
  const merged = deepMerge(existing.source, spec.doc);
  if (spec.detectNoop && JSON.stringify(merged) === JSON.stringify(existing.source)) return noop(index, id, existing);
  return written(index, id, store.put(index, id, merged, existing.version + 1), 'updated');
}

/** A missing document: created from `upsert` (or `doc` with doc_as_upsert), else document_missing_exception. */
function upsert(store: DocumentStore, write: DocumentWrite, spec: UpdateSpec, current: CurrentVersion | null): AppliedOperation {
  const seed = spec.docAsUpsert ? spec.doc : spec.upsert;
  if (seed === null) return failed(store, write, documentMissing(write.index, write.id));
  const version = nextVersion({ ...NO_CONDITIONS, version: MATCH_DELETED }, current);
  return written(write.index, write.id, store.put(write.index, write.id, seed, version), 'created');
}

function absent(current: CurrentVersion | null): boolean {
  return current === null || current.deleted;
}

function written(index: string, id: string, stored: StoredDocument, result: 'created' | 'updated'): AppliedOperation {
  const status = result === 'created' ? 201 : 200;
  return {
    response: { status, body: { _index: index, _id: id, _version: stored.version, result, _shards: SHARDS, _seq_no: stored.seqNo, _primary_term: stored.primaryTerm } },
    outcome: { status, result, error: null, version: stored.version, seqNo: stored.seqNo, primaryTerm: stored.primaryTerm, source: stored.source },
  };
}

/** A no-op update answers the current revision; no sequence number is used. */
function noop(index: string, id: string, existing: StoredDocument): AppliedOperation {
  return {
    response: {
      status: 200,
      body: { _index: index, _id: id, _version: existing.version, result: 'noop', _shards: NOOP_SHARDS, _seq_no: existing.seqNo, _primary_term: existing.primaryTerm },
    },
    outcome: { status: 200, result: 'noop', error: null, version: existing.version, seqNo: existing.seqNo, primaryTerm: existing.primaryTerm, source: existing.source },
  };
}

function failed(store: DocumentStore, write: DocumentWrite, response: OperationResult): AppliedOperation {
  const type = response.error?.type;
  const source = store.document(write.index, write.id)?.source ?? null;
  return { response, outcome: { status: response.status, result: null, error: typeof type === 'string' ? type : 'unknown', version: null, seqNo: null, primaryTerm: null, source } };
}

function deepMerge(base: JsonObject, patch: JsonObject): JsonObject {
  const merged: JsonObject = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const current = merged[key];
    merged[key] = isJsonObject(current) && isJsonObject(value) ? deepMerge(current, value) : value;
  }
  return merged;
}
