import type { UpstreamResponse } from '../../elasticsearch/upstream-forwarder.js';
import type { JsonObject } from './filter-json.js';
import { renderAnswer, renderError } from './render-json.js';
import { PLAIN_RESPONSE, type ResponseOptions } from './response-options.js';

/** A composed answer, serialized or not, written as the request asked. Bytes pass unchanged when it asked nothing. */
export function presentedAnswer(body: Buffer | string | object, options: ResponseOptions): Buffer {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  if (!asksForPresentation(options)) return bytes;
  const object = jsonObjectOf(bytes);
  return object === null ? bytes : renderAnswer(object, options);
}

/**
 * Elasticsearch's error answer to a request the proxy sent without the client's presentation
 * parameters (a sub-bulk refused as a whole): written the way Elasticsearch would have written
 * it for the client's request, `pretty` if asked; errors are never filtered.
 */
export function presentedUpstreamError(upstream: UpstreamResponse, options: ResponseOptions): UpstreamResponse {
  if (!options.pretty || !isJsonResponse(upstream)) return upstream;
  const object = jsonObjectOf(upstream.body);
  return object === null ? upstream : { ...upstream, body: renderError(object, options) };
}

function asksForPresentation(options: ResponseOptions): boolean {
  return options !== PLAIN_RESPONSE && (options.pretty || options.includes !== null || options.excludes !== null);
}

function isJsonResponse(upstream: UpstreamResponse): boolean {
  const type = upstream.headers['content-type'] ?? '';
  return /^application\/(?:vnd\.elasticsearch\+)?json\b/i.test(type);
}

function jsonObjectOf(body: Buffer | string): JsonObject | null {
  try {
    const parsed: unknown = JSON.parse(body.toString());
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as JsonObject) : null;
  } catch {
    return null;
  }
}
