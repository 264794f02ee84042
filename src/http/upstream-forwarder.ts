import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { ProxyError } from '../errors/proxy-error.js';

/**
 * How requests reach the cluster. Request bodies are already buffered by the HTTP edge (as
 * Elasticsearch itself aggregates a whole request up to `http.max_content_length`), which is
 * what lets a refused connection be replayed on the next host without losing bytes.
 */
export interface ForwardRequest {
  readonly method: string;
  /** Raw path and query string exactly as received (never re-encoded). */
  readonly url: string;
  /** Client headers; the forwarder drops hop-by-hop ones (RFC 9110 §7.6.1) itself. */
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface ForwardOutcome {
  /** Upstream status, or the status the proxy answered with when the upstream failed. */
  readonly status: number;
  /** False only when no byte of the request can have reached Elasticsearch (safe to replay). */
  readonly reachedUpstream: boolean;
  readonly upstreamHost: string | null;
  readonly error: ProxyError | null;
}

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** `[name, value, ...]` as received (original case, repeated headers kept). */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
  readonly upstreamHost: string;
}

export interface UpstreamForwarder {
  /**
   * Streams the upstream answer to `res` unchanged (status, headers, body). Never rejects:
   * upstream failures are answered in Elasticsearch's error shape when nothing was sent yet.
   * Resolves only once the upstream exchange is over — response fully received, or the
   * upstream socket closed — so a caller holding a lock can release it at that moment.
   */
  pipe(request: ForwardRequest, res: ServerResponse): Promise<ForwardOutcome>;
  /** Buffers the upstream answer (used to merge bulk responses). Rejects with `ProxyError`. */
  exchange(request: ForwardRequest): Promise<UpstreamResponse>;
  close(): Promise<void>;
}
