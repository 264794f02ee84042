import { filterJson, type JsonObject } from './filter-json.js';
import { prettyJson } from './pretty-json.js';
import type { ResponseOptions } from './response-options.js';

/** A successful answer the proxy composed (a merged `_bulk`): `filter_path`, then `pretty`. */
export function renderAnswer(body: JsonObject, options: ResponseOptions): Buffer {
  const filtered = filterJson(body, options.includes, options.excludes);
  return Buffer.from(options.pretty ? prettyJson(filtered) : JSON.stringify(filtered));
}

/**
 * An error answer: Elasticsearch writes errors with `pretty` but never filters them
 * (AbstractRestChannel.newErrorBuilder), so a client always sees why its request failed.
 */
export function renderError(body: JsonObject, options: ResponseOptions): Buffer {
  return Buffer.from(options.pretty ? prettyJson(body) : JSON.stringify(body));
}
