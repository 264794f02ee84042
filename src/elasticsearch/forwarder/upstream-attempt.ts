import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { ProxyError } from '../../errors/proxy-error.js';
import type { ForwardRequest } from '../upstream-forwarder.js';
import type { AnswerSink } from './answer-sink.js';
import type { UpstreamHost } from './host-pool.js';
import { errorCode, requestNotForwardable, upstreamReset, upstreamTimeout } from './upstream-errors.js';
import { upstreamRequestHeaders } from './upstream-headers.js';

export type AttemptResult =
  /** The answer's head arrived and went to the sink, which gets the rest. */
  | { readonly kind: 'response'; readonly status: number }
  /** The connection was never established: no byte reached the host, the next host may be tried. */
  | { readonly kind: 'unreached'; readonly cause: Error }
  /** Not sent (`reachedUpstream` false: `beforeSend` refused, or the request cannot be written), or failed once bytes may have reached Elasticsearch: never replayed. */
  | { readonly kind: 'failed'; readonly error: ProxyError; readonly reachedUpstream: boolean };

/**
 * Sends `request` to one host through its undici pool and settles on the answer's head or the
 * first failure. undici calls `onConnect` when the request is handed to an established connection,
 * before its first byte is written: that is where `beforeSend` runs, and what tells "never
 * reached" (connection refused or timed out: the next host may be tried) from "bytes may have
 * reached Elasticsearch" (never replayed). A streamed body is read only once the request is
 * written, so a refused host leaves it unread for the next one.
 */
export function attemptHost(dispatcher: Dispatcher, host: UpstreamHost, request: ForwardRequest, sink: AnswerSink, timeoutMs: number): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let options: Dispatcher.DispatchOptions;
    try {
      options = dispatchOptions(host, request);
    } catch (error) {
      resolve({ kind: 'failed', error: requestNotForwardable(error), reachedUpstream: false });
      return;
    }
    let handedOver = false;
    let vetoed: ProxyError | null = null;
    let headed = false;
    const failedBeforeHead = (error: Error): AttemptResult => {
      if (vetoed !== null) return { kind: 'failed', error: vetoed, reachedUpstream: false };
      if (!handedOver) return isUnwritable(error) ? { kind: 'failed', error: requestNotForwardable(error), reachedUpstream: false } : { kind: 'unreached', cause: error };
      if (errorCode(error) === 'UND_ERR_HEADERS_TIMEOUT') return { kind: 'failed', error: upstreamTimeout(host, timeoutMs, error), reachedUpstream: true };
      return { kind: 'failed', error: upstreamReset(host, error), reachedUpstream: true };
    };
    dispatcher.dispatch(options, {
      onConnect: (abort) => {
        // undici hands a request over again only to re-send it after a pipelined failure: never.
        if (handedOver) {
          abort(new Error('request would have been sent twice'));
          return;
        }
        handedOver = true;
        vetoed = request.beforeSend?.() ?? null;
        if (vetoed !== null) abort(vetoed);
      },
      onHeaders: (status, rawHeaders, resume, statusText) => {
        if (status < 200) return true;
        headed = true;
        resolve({ kind: 'response', status });
        sink.head(status, latin1(rawHeaders), statusText, resume);
        return true;
      },
      onData: (chunk) => sink.data(chunk),
      onComplete: () => sink.end(),
      onError: (error) => {
        if (headed) sink.cut(error);
        else resolve(failedBeforeHead(error));
      },
    });
  });
}

/**
 * The request as undici takes it. undici frames the body itself: a held body by its length; a
 * streamed one by the client's Content-Length, else chunked (or by its length when the whole body
 * has already arrived). It refuses a Transfer-Encoding header, so the chunked marker is dropped.
 */
function dispatchOptions(host: UpstreamHost, request: ForwardRequest): Dispatcher.DispatchOptions {
  const head = upstreamRequestHeaders(request, host);
  const body: Buffer | Readable | null = Buffer.isBuffer(request.body) || head.streamsBody ? request.body : null;
  return { method: request.method as Dispatcher.HttpMethod, path: host.pathPrefix + request.url, headers: head.headers, body };
}

/** Node's parser accepted the request, undici will not write it (a header or path it refuses). */
function isUnwritable(error: Error): boolean {
  const code = errorCode(error);
  return code === 'UND_ERR_INVALID_ARG' || code === 'UND_ERR_NOT_SUPPORTED';
}

/** Header bytes as Node's own HTTP parser gives them (latin1), so a relayed value is unchanged. */
function latin1(raw: readonly Buffer[]): string[] {
  const headers = new Array<string>(raw.length);
  for (let i = 0; i < raw.length; i++) headers[i] = raw[i]?.toString('latin1') ?? '';
  return headers;
}
