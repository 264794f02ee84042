import type { ProxyError } from '../errors/proxy-error.js';
import type { ForwardRequest, UpstreamResponse } from '../elasticsearch/upstream-forwarder.js';

/**
 * How the write path answers a write; the HTTP edge renders it (status, headers, body, and the
 * options the client asked for such as `pretty`). Outcomes carry what the answer is made of, so
 * rendering costs no more than writing the response directly did.
 */
export type WriteOutcome =
  /** Elasticsearch's answer, read whole: relayed with its status and headers. */
  | { readonly kind: 'upstream'; readonly upstream: UpstreamResponse }
  /**
   * Elasticsearch refused a request the proxy sent without the client's presentation parameters
   * (a sub-bulk) as a whole: relayed as Elasticsearch would have written it for the client.
   */
  | { readonly kind: 'upstream_refusal'; readonly upstream: UpstreamResponse }
  /** An answer the proxy composed (a merged bulk answer), in Elasticsearch's JSON shape. */
  | { readonly kind: 'composed'; readonly status: number; readonly body: Buffer; readonly notes: AnswerNotes }
  /** The proxy's own refusal, in Elasticsearch's error shape. */
  | { readonly kind: 'error'; readonly error: ProxyError; readonly notes: AnswerNotes }
  /** A write that needs no lock: forwarded as it came, the answer streamed back by the edge. */
  | { readonly kind: 'forward'; readonly request: ForwardRequest }
  /** Nothing left to write: the answer was streamed (`WriteRequest.streamAnswer`) or the client left. */
  | { readonly kind: 'done' };

/**
 * What the write path tells the client beside the answer itself; the edge alone turns it into
 * headers (`Retry-After`, `X-Dead-Letter-Id`), so write/ knows no header names.
 */
export interface AnswerNotes {
  /** When to try again, in seconds (a lock wait timed out, a share was exceeded). */
  readonly retryAfterSeconds?: number;
  /** The dead-letter record that keeps a background write the proxy gave up on. */
  readonly deadLetterId?: string;
}

export const NO_NOTES: AnswerNotes = Object.freeze({});

export const DONE: WriteOutcome = Object.freeze({ kind: 'done' });

export function errorOutcome(error: ProxyError, notes: AnswerNotes = NO_NOTES): WriteOutcome {
  return { kind: 'error', error, notes };
}
