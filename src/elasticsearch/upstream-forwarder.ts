import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { ProxyError } from '../errors/proxy-error.js';

/**
 * How requests reach the cluster. A body is either bytes the proxy holds (a locked write, whose
 * body the write path needed whole) or the client's request stream, which a forwarder reads only
 * once an upstream connection is established: a host that refuses the connection has then received
 * nothing and the next host can be tried with the same, still unread, stream.
 */
export interface ForwardRequest {
  readonly method: string;
  /** Raw path and query string exactly as received (never re-encoded). */
  readonly url: string;
  /**
   * Client headers as received (`[name, value, ...]`, original case and order), sent upstream
   * minus hop-by-hop ones and `dropHeaders`, with the proxy's own framing and `Host`.
   */
  readonly rawHeaders: readonly string[];
  /** Lower-case names not to forward besides the hop-by-hop ones (the proxy's lock header). */
  readonly dropHeaders?: readonly string[];
  readonly body: Buffer | Readable;
  /**
   * Called synchronously at the moment the request is handed to an established upstream
   * connection, before its first byte is written. A non-null result aborts: nothing is sent, the
   * forward fails with that error and `reachedUpstream: false`.
   */
  readonly beforeSend?: () => ProxyError | null;
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

/** An answer relayed without waiting for its client: see `UpstreamForwarder.spool`. */
export interface SpooledForward {
  /** Resolves once Elasticsearch's answer is complete or cut, whatever the client has taken of it. */
  readonly outcome: Promise<ForwardOutcome>;
  /** Resolves once the client's response is over: delivered whole, or its connection closed. */
  readonly delivered: Promise<void>;
}

export interface UpstreamForwarder {
  /**
   * Streams the upstream answer to `res` unchanged (status, headers, body). Never rejects:
   * upstream failures are answered in Elasticsearch's error shape when nothing was sent yet.
   * Resolves only once the upstream exchange is over — response fully received, or the
   * upstream socket closed — so a caller holding a lock can release it at that moment.
   */
  pipe(request: ForwardRequest, res: ServerResponse): Promise<ForwardOutcome>;
  /**
   * As `pipe`, for an exchange that must not wait for its client (a bulk under its locks): the
   * answer is taken from Elasticsearch at its own pace; what the client has not taken yet waits in
   * memory up to a bound, beyond it in a temporary file, and goes out as the client reads. A
   * client that takes nothing for the client idle time has its connection closed.
   */
  spool(request: ForwardRequest, res: ServerResponse): SpooledForward;
  /**
   * Buffers the upstream answer (used to merge bulk responses, or to read a write's answer).
   * Rejects with `ProxyError`: UPSTREAM_UNREACHABLE and the request's own `beforeSend` error mean
   * that nothing was sent.
   */
  exchange(request: ForwardRequest): Promise<UpstreamResponse>;
  close(): Promise<void>;
}
