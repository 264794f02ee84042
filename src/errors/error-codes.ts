/**
 * Every error code the proxy can answer with, mapped once to the HTTP status and the
 * Elasticsearch exception type a client sees. Types follow Elasticsearch's own names where one
 * exists, so clients that switch on `error.type` keep working behind the proxy.
 */
export const ERROR_CODES = {
  CONFIG_INVALID: { status: 500, type: 'settings_exception' },
  BAD_REQUEST: { status: 400, type: 'illegal_argument_exception' },
  BAD_LOCK_HEADER: { status: 400, type: 'illegal_argument_exception' },
  BAD_BULK_BODY: { status: 400, type: 'illegal_argument_exception' },
  BAD_JSON: { status: 400, type: 'parse_exception' },
  /** An indexed or updated id over 512 bytes (as Java counts them): Elasticsearch refuses the whole request so. */
  ID_TOO_LONG: { status: 400, type: 'action_request_validation_exception' },
  /** Elasticsearch answers 406 for a body whose Content-Type it cannot read (RestController). */
  UNSUPPORTED_CONTENT_TYPE: { status: 406, type: 'media_type_header_exception' },
  BODY_TOO_LARGE: { status: 413, type: 'content_too_long_exception' },
  /** A compressed body that inflates past proxy.max.body.bytes: stopped at the limit, nothing forwarded. */
  INFLATED_BODY_TOO_LARGE: { status: 413, type: 'content_too_long_exception' },
  /** A gzip or deflate body that does not decode; Netty's decoder (Elasticsearch's HTTP layer) fails these too. */
  CORRUPT_COMPRESSED_BODY: { status: 400, type: 'illegal_argument_exception' },
  /**
   * A Content-Encoding the proxy cannot decode on a route whose body it must read to lock it
   * (RFC 9110 §15.5.16). Elasticsearch does not decode these either and answers 400 once it fails
   * to parse the compressed bytes; 415 names the actual cause.
   */
  UNSUPPORTED_CONTENT_ENCODING: { status: 415, type: 'unsupported_content_encoding_exception' },
  /**
   * OpenSearch's streaming bulk answers each item while the request body is still arriving, so the
   * proxy cannot lock a document before OpenSearch writes it: refused, never passed through unlocked.
   */
  STREAMING_BULK_UNSUPPORTED: { status: 400, type: 'illegal_argument_exception' },
  /**
   * A path that Elasticsearch and OpenSearch route to different writes (`POST /logs/_doc/_bulk`: an
   * index of id `_bulk` on Elasticsearch 8 and 9, a bulk on OpenSearch 1.x). One lock cannot cover
   * both, and the proxy does not know which cluster it fronts.
   */
  AMBIGUOUS_WRITE_ROUTE: { status: 400, type: 'illegal_argument_exception' },
  /** A date-math index name Elasticsearch refuses (its ElasticsearchParseException): nothing locked or forwarded. */
  DATE_MATH_INVALID: { status: 400, type: 'parse_exception' },
  /** A date-math index name valid for Elasticsearch whose format or zone the proxy does not evaluate: refused, never locked on a guess. */
  DATE_MATH_UNSUPPORTED: { status: 400, type: 'illegal_argument_exception' },
  /**
   * A bulk item whose date-math `_index` named another index by the time its lock was granted (its
   * wait crossed a day's end, say): answered 429 so the bulk helpers send it again, never written
   * under the lock of the document it named before.
   */
  DATE_MATH_BOUNDARY_CROSSED: { status: 429, type: 'date_math_boundary_exception' },
  REQUEST_TIMEOUT: { status: 408, type: 'request_timeout_exception' },
  BY_QUERY_REJECTED: { status: 403, type: 'security_exception' },
  LOCK_TIMEOUT: { status: 429, type: 'lock_wait_timeout_exception' },
  LOCK_UNAVAILABLE: { status: 503, type: 'lock_service_unavailable_exception' },
  LOCK_LOST: { status: 503, type: 'lock_service_unavailable_exception' },
  ALIAS_RESOLUTION_FAILED: { status: 503, type: 'alias_resolution_exception' },
  /** proxy.fencing=on and the read of the document's `_seq_no` failed: the write was not forwarded. */
  FENCING_READ_FAILED: { status: 503, type: 'fencing_unavailable_exception' },
  UPSTREAM_UNREACHABLE: { status: 502, type: 'upstream_unreachable_exception' },
  UPSTREAM_RESET: { status: 502, type: 'upstream_connection_reset_exception' },
  UPSTREAM_TIMEOUT: { status: 504, type: 'upstream_timeout_exception' },
  SHUTTING_DOWN: { status: 503, type: 'node_shutting_down_exception' },
  ADMIN_FORBIDDEN: { status: 403, type: 'security_exception' },
  /** A foreground write from someone outside proxy.priority.foreground.allow, with proxy.priority.foreground.denied=reject. */
  FOREGROUND_NOT_ALLOWED: { status: 403, type: 'security_exception' },
  /** proxy.auth.privileges=on and the cluster says the credentials may not do this write (`_has_privileges`). */
  WRITE_UNAUTHORIZED: { status: 403, type: 'security_exception' },
  /** One principal already has proxy.lock.max.waiting.per.principal locked writes in this proxy; Elasticsearch's own word for a full queue. */
  PRINCIPAL_SHARE_EXCEEDED: { status: 429, type: 'es_rejected_execution_exception' },
  LOCK_NOT_HELD: { status: 404, type: 'resource_not_found_exception' },
  /** The shared dead-letter index could not be read or written (the local files still hold every record). */
  DEAD_LETTER_INDEX_FAILED: { status: 503, type: 'dead_letter_index_exception' },
  INTERNAL: { status: 500, type: 'internal_proxy_exception' },
} as const satisfies Record<string, { status: number; type: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function statusFor(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

export function elasticsearchTypeFor(code: ErrorCode): string {
  return ERROR_CODES[code].type;
}
