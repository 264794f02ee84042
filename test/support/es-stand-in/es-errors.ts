/**
 * Elasticsearch's error bodies, field for field and in its field order, as the stand-in answers
 * them: the REST wrapper `{"error":{"root_cause":[…],…},"status":N}` for whole requests, the bare
 * `error` object for `_bulk` items and `_mget` documents.
 */
export type JsonObject = Record<string, unknown>;

/** Outcome of one operation: HTTP status plus the body Elasticsearch would send. */
export interface OperationResult {
  readonly status: number;
  readonly body: JsonObject;
  /** Set for failures: the `error` object, without the wrapping (what a bulk item carries). */
  readonly error?: JsonObject;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A failure whose `error` object is `fields` (type and reason first). */
export function errorResult(status: number, fields: JsonObject & { type: string; reason: string }): OperationResult {
  return { status, body: { error: { root_cause: [fields], ...fields }, status }, error: fields };
}

/** A failure that names its index the way shard-level exceptions do (index_uuid, shard, index). */
export function failure(status: number, type: string, reason: string, index?: string, extra: JsonObject = {}): OperationResult {
  const located = index === undefined ? {} : { index_uuid: indexUuidOf(index), ...extra, index };
  return errorResult(status, { type, reason, ...(index === undefined ? extra : located) });
}

/** `ActionRequestValidationException`: every validation error of the request, numbered, in one 400. */
export function validationFailure(errors: readonly string[]): OperationResult {
  const reason = `Validation Failed: ${errors.map((error, n) => `${n + 1}: ${error};`).join('')}`;
  return errorResult(400, { type: 'action_request_validation_exception', reason });
}

/** `IllegalArgumentException` thrown while parsing a request: 400 without index fields. */
export function illegalArgument(reason: string): OperationResult {
  return errorResult(400, { type: 'illegal_argument_exception', reason });
}

/** `VersionConflictEngineException`: `[id]: version conflict, <explanation>` on shard 0 of the index. */
export function versionConflict(index: string, id: string, explanation: string): OperationResult {
  return errorResult(409, {
    type: 'version_conflict_engine_exception',
    reason: `[${id}]: version conflict, ${explanation}`,
    index_uuid: indexUuidOf(index),
    shard: '0',
    index,
  });
}

export function documentMissing(index: string, id: string): OperationResult {
  return errorResult(404, { type: 'document_missing_exception', reason: `[${id}]: document missing`, index_uuid: indexUuidOf(index), shard: '0', index });
}

/** A name that resolves to no index (reads; deletes, which never create an index). */
export function indexNotFound(index: string): OperationResult {
  return errorResult(404, {
    type: 'index_not_found_exception',
    reason: `no such index [${index}]`,
    'resource.type': 'index_expression',
    'resource.id': index,
    index_uuid: '_na_',
    index,
  });
}

/**
 * A stable, Elasticsearch-looking index UUID (22 url-safe base64 characters) derived from the
 * name, so errors and answers agree without the store handing UUIDs around.
 */
export function indexUuidOf(index: string): string {
  let hash = 0x811c9dc5;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let uuid = '';
  for (let n = 0; uuid.length < 22; n += 1) {
    hash = Math.imul(hash ^ (index.charCodeAt(n % Math.max(index.length, 1)) || 0) ^ n, 0x01000193) >>> 0;
    uuid += alphabet[hash % 64];
  }
  return uuid;
}
