import type { ServerResponse } from 'node:http';
import { elasticsearchTypeFor, statusFor } from '../errors/error-codes.js';
import { ProxyError } from '../errors/proxy-error.js';
import { renderError } from './response-options/render-json.js';
import { lenientResponseOptionsOf, type ResponseOptions } from './response-options/response-options.js';

/** Headers on every response the proxy builds itself; the official client requires the first. */
export const PROXY_RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-elastic-product': 'Elasticsearch',
  'content-type': 'application/json',
});

/** A type alias, not an interface: it must be assignable to the JSON object type renderers take. */
export type ElasticsearchErrorBody = {
  readonly error: {
    readonly root_cause: readonly { readonly type: string; readonly reason: string }[];
    readonly type: string;
    readonly reason: string;
  };
  readonly status: number;
};

/** Elasticsearch's own error shape, status and type taken from the error-codes table. */
export function elasticsearchErrorBody(error: ProxyError): ElasticsearchErrorBody {
  const type = elasticsearchTypeFor(error.code);
  const status = statusFor(error.code);
  return { error: { root_cause: [{ type, reason: error.message }], type, reason: error.message }, status };
}

/** Anything thrown that is not a ProxyError is an internal fault; its text stays in the logs. */
export function asProxyError(error: unknown): ProxyError {
  if (error instanceof ProxyError) return error;
  return new ProxyError('INTERNAL', 'the proxy failed to handle the request', { cause: error });
}

/**
 * Answers with `error` in Elasticsearch's shape, written as the request asked (`pretty`; errors
 * are never filtered, as in Elasticsearch). When the response has already started there is no
 * honest way to report an error, so the connection is cut instead (the client sees a truncated
 * response rather than a corrupted one).
 */
export function sendElasticsearchError(
  res: ServerResponse,
  error: ProxyError,
  extraHeaders: Readonly<Record<string, string>> = {},
  options: ResponseOptions = lenientResponseOptionsOf(res.req?.url),
): void {
  if (res.headersSent) {
    // Complete already: the client may be reusing the connection for its next request.
    if (!res.writableEnded) res.destroy(error);
    return;
  }
  const payload = renderError(elasticsearchErrorBody(error), options);
  res.writeHead(statusFor(error.code), {
    ...PROXY_RESPONSE_HEADERS,
    ...extraHeaders,
    'content-length': String(payload.length),
  });
  res.end(payload);
}

/**
 * Answers `error` unless the response is complete already (the client may be reusing the connection
 * for its next request) or gone; a response that had started is cut (`sendElasticsearchError`).
 */
export function answerUnlessComplete(res: ServerResponse, error: ProxyError, extraHeaders: Readonly<Record<string, string>> = {}): void {
  if (res.writableEnded || res.destroyed) return;
  sendElasticsearchError(res, error, extraHeaders);
}
