import type { DocumentStore } from './document-store.js';
import { resolveCreateVersion, updateSpecOf, validationErrorsOf, type DocumentWrite, type WriteAction } from './document-write.js';
import { errorResult, validationFailure, type OperationResult } from './es-errors.js';
import { MATCH_ANY, MATCH_DELETED, type Conditions } from './version-rules.js';
import { duplicateFieldOf, duplicateReason, type DuplicateField } from './strict-json.js';
import { parseConditions, parseInt32, parseOpType, rawConditionsOfQuery } from './write-params.js';

/** A single-document write request: ready to apply, or answered at once (400) before it reaches a shard. */
export type PreparedWrite = { readonly write: DocumentWrite } | { readonly rejected: OperationResult };

export interface SingleWriteInput {
  readonly target: string;
  /** null: `POST /{index}/_doc` (auto-generated id). */
  readonly id: string | null;
  readonly query: URLSearchParams;
  readonly body: Buffer;
}

/** `PUT|POST /{index}/_doc/{id}` (op_type from the query), `/{index}/_create/{id}` with `createRoute`, auto-id POST. */
export function prepareIndex(store: DocumentStore, input: SingleWriteInput, createRoute: boolean): PreparedWrite {
  if (input.body.length === 0) return { rejected: bodyRequired() };
  const conditions = parseConditions(rawConditionsOfQuery(input.query));
  if (!conditions.ok) return { rejected: conditions.failure };
  const opType = parseOpType(input.query.get('op_type'), createRoute);
  if (!opType.ok) return { rejected: opType.failure };
  const action: WriteAction = opType.value;
  const duplicate = duplicateIn(input.body);
  // The document is parsed on its shard (DocumentParser): refused there, nothing written.
  if (duplicate !== null) return { rejected: errorResult(400, { type: 'document_parsing_exception', reason: `[${duplicate.line}:${duplicate.column}] failed to parse: ${duplicateReason(duplicate)}` }) };
  const write = documentWrite(store, input, action, resolveCreateVersion(conditions.value, action), parseJson(input.body));
  const autoIdErrors = input.id === null && versionedWithoutId(write) ? ['an id must be provided if version type or value are set'] : [];
  return checked(write, autoIdErrors);
}

/** `POST /{index}/_update/{id}`: versions are refused up front (RestUpdateAction), CAS and upserts validated. */
export function prepareUpdate(store: DocumentStore, input: SingleWriteInput): PreparedWrite {
  const retries = parseInt32('retry_on_conflict', input.query.get('retry_on_conflict') ?? undefined, 0);
  if (!retries.ok) return { rejected: retries.failure };
  if (input.query.has('version') || input.query.has('version_type')) {
    return { rejected: validationFailure(['internal versioning can not be used for optimistic concurrency control. Please use `if_seq_no` and `if_primary_term` instead']) };
  }
  const conditions = parseConditions({ ...rawConditionsOfQuery(input.query), version: undefined, versionType: undefined });
  if (!conditions.ok) return { rejected: conditions.failure };
  if (input.body.length === 0) return { rejected: bodyRequired() };
  const duplicate = duplicateIn(input.body);
  if (duplicate !== null) return { rejected: errorResult(400, { type: 'x_content_parse_exception', reason: duplicateReason(duplicate) }) };
  const body = parseJson(input.body);
  const write = { ...documentWrite(store, input, 'update', conditions.value, body), update: updateSpecOf(body, retries.value) };
  return checked(write, []);
}

/** `DELETE /{index}/_doc/{id}`. */
export function prepareDelete(store: DocumentStore, input: SingleWriteInput): PreparedWrite {
  const conditions = parseConditions(rawConditionsOfQuery(input.query));
  if (!conditions.ok) return { rejected: conditions.failure };
  return checked(documentWrite(store, input, 'delete', conditions.value, null), []);
}

function documentWrite(store: DocumentStore, input: SingleWriteInput, action: WriteAction, conditions: Conditions, body: unknown): DocumentWrite {
  const routing = store.writeRoutingOf(input.target, input.query.get('routing'));
  return { action, target: input.target, index: store.writeIndexOf(input.target), id: input.id ?? autoId(), body, update: null, conditions, routing };
}

function checked(write: DocumentWrite, extraErrors: readonly string[]): PreparedWrite {
  const errors = [...extraErrors, ...validationErrorsOf(write)];
  return errors.length > 0 ? { rejected: validationFailure(errors) } : { write };
}

function versionedWithoutId(write: DocumentWrite): boolean {
  const { versionType, version } = write.conditions;
  return versionType !== 'internal' || (version !== MATCH_DELETED && version !== MATCH_ANY);
}

/** `RestRequest.requiredContent()`. */
function bodyRequired(): OperationResult {
  return errorResult(400, { type: 'parse_exception', reason: 'request body is required' });
}

/** Elasticsearch's auto-generated ids are 20 url-safe base64 characters. */
export function autoId(): string {
  return Buffer.from(Array.from({ length: 15 }, () => Math.floor(Math.random() * 256))).toString('base64url');
}

/** A field named twice in a body that is JSON otherwise (a body that is not is left to the checks it fails). */
function duplicateIn(body: Buffer): DuplicateField | null {
  return parseJson(body) === undefined ? null : duplicateFieldOf(body.toString('utf8'));
}

export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
