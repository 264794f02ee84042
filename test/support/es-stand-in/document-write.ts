import { javaUtf8Length } from '../elasticsearch-rules.js';
import { isJsonObject, type JsonObject } from './es-errors.js';
import { casValidationErrors, MATCH_ANY, MATCH_DELETED, UNASSIGNED_PRIMARY_TERM, UNASSIGNED_SEQ_NO, type Conditions } from './version-rules.js';

/** The operation a write performs on its document (`index` with op_type=create is `create`). */
export type WriteAction = 'index' | 'create' | 'update' | 'delete';

/** The parts of an `_update` body the stand-in acts on. */
export interface UpdateSpec {
  readonly doc: JsonObject | null;
  readonly upsert: JsonObject | null;
  readonly docAsUpsert: boolean;
  readonly detectNoop: boolean;
  /** Present (not undefined) when the body has a `script`: validated, not run. */
  readonly script: unknown;
  /** Accepted and validated; never needed, since the stand-in applies an update atomically. */
  readonly retryOnConflict: number;
}

/** One document write, parsed and validated, waiting to be applied at the end of its delay. */
export interface DocumentWrite {
  readonly action: WriteAction;
  /** Index, alias or data stream as the client named it. */
  readonly target: string;
  /** The concrete index it lands in. */
  readonly index: string;
  readonly id: string;
  /** index/create: the document; update: the update request; delete: null (undefined: not JSON). */
  readonly body: unknown;
  readonly update: UpdateSpec | null;
  readonly conditions: Conditions;
  /** The routing it is written with, an alias's `index_routing` applied (absent or null: by id). */
  readonly routing?: string | null;
}

const MAX_ID_BYTES = 512;

/**
 * `IndexRequest.validate` / `DeleteRequest.validate` / `UpdateRequest.validate`: the messages
 * Elasticsearch collects before it executes anything (a single write answers them as one 400,
 * a `_bulk` fails as a whole with every item's messages).
 */
export function validationErrorsOf(write: DocumentWrite): string[] {
  switch (write.action) {
    case 'index':
    case 'create':
      return indexValidation(write);
    case 'delete':
      return [...(write.id === '' ? ['id is missing'] : []), ...casValidationErrors(write.conditions)];
    case 'update':
      return updateValidation(write);
  }
}

function indexValidation(write: DocumentWrite): string[] {
  const { versionType, version, ifSeqNo, ifPrimaryTerm } = write.conditions;
  if (write.action === 'create') {
    // Elasticsearch stops at the first create-specific problem.
    if (versionType !== 'internal') return ['create operations only support internal versioning. use index instead'];
    if (version !== MATCH_DELETED) return ['create operations do not support explicit versions. use index instead'];
    if (ifSeqNo !== UNASSIGNED_SEQ_NO || ifPrimaryTerm !== UNASSIGNED_PRIMARY_TERM) return ['create operations do not support compare and set. use index instead'];
  }
  return [...casValidationErrors(write.conditions), ...idLengthErrors(write.id)];
}

function updateValidation(write: DocumentWrite): string[] {
  const spec = write.update;
  const errors = [...(write.id === '' ? ['id is missing'] : []), ...casValidationErrors(write.conditions)];
  if (spec === null) return errors;
  if (write.conditions.ifSeqNo !== UNASSIGNED_SEQ_NO) {
    if (spec.retryOnConflict > 0) errors.push('compare and write operations can not be retried');
    if (spec.docAsUpsert) errors.push('compare and write operations can not be used with upsert');
    if (spec.upsert !== null) errors.push("upsert requests don't support `if_seq_no` and `if_primary_term`");
  }
  if (spec.script === undefined && spec.doc === null) errors.push('script or doc is missing');
  if (spec.script !== undefined && spec.doc !== null) errors.push("can't provide both script and doc");
  if (spec.doc === null && spec.docAsUpsert) errors.push('doc must be specified if doc_as_upsert is enabled');
  return [...errors, ...idLengthErrors(write.id)];
}

/** DocWriteRequest.validateDocIdLength counts `id.getBytes(UTF_8)`: an unpaired surrogate is one byte (`?`). */
function idLengthErrors(id: string): string[] {
  const bytes = javaUtf8Length(id);
  return bytes > MAX_ID_BYTES ? [`id [${id}] is too long, must be no longer than ${MAX_ID_BYTES} bytes but was: ${bytes}`] : [];
}

/** `_update` body fields (a non-object body leaves every field unset). */
export function updateSpecOf(body: unknown, retryOnConflict: number): UpdateSpec {
  const request = isJsonObject(body) ? body : {};
  return {
    doc: isJsonObject(request.doc) ? request.doc : null,
    upsert: isJsonObject(request.upsert) ? request.upsert : null,
    docAsUpsert: request.doc_as_upsert === true,
    detectNoop: request.detect_noop !== false,
    script: request.script ?? undefined,
    retryOnConflict,
  };
}

/** op_type=create without an explicit version means "must not exist" (`resolveVersionDefaults`). */
export function resolveCreateVersion(conditions: Conditions, action: WriteAction): Conditions {
  return action === 'create' && conditions.version === MATCH_ANY ? { ...conditions, version: MATCH_DELETED } : conditions;
}
