import { ProxyError } from '../../errors/proxy-error.js';
import { compileFilterPaths, type FilterPathNode } from './filter-path.js';
import { queryParams } from '../../elasticsearch/request-params.js';

/** The request's wishes about how an answer is written, as Elasticsearch reads them. */
export interface ResponseOptions {
  /** `filter_path` entries without a leading `-` (null: no inclusion filter). */
  readonly includes: FilterPathNode | null;
  /** `filter_path` entries with a leading `-`, the `-` removed (null: no exclusion filter). */
  readonly excludes: FilterPathNode | null;
  readonly pretty: boolean;
  /**
   * Validated like Elasticsearch does, but it adds nothing to the proxy's own errors: their
   * reason says all there is, and a Node.js stack would only disclose the proxy's internals.
   */
  readonly errorTrace: boolean;
}

export const PLAIN_RESPONSE: ResponseOptions = Object.freeze({ includes: null, excludes: null, pretty: false, errorTrace: false });

/**
 * Reads `filter_path`, `pretty` and `error_trace` from a raw request URL. A boolean that is
 * neither `true`, `false` nor empty is refused as Elasticsearch refuses it (400).
 */
export function responseOptionsOf(url: string): ResponseOptions {
  const params = queryParams(url);
  const filters = tokens(params.get('filter_path'));
  return {
    includes: compileFilterPaths(filters.filter((filter) => !filter.startsWith('-'))),
    excludes: compileFilterPaths(filters.filter((filter) => filter.startsWith('-')).map((filter) => filter.slice(1))),
    pretty: booleanParam(params.get('pretty')),
    errorTrace: booleanParam(params.get('error_trace')),
  };
}

/**
 * For answering errors: options that cannot be read fall back to a plain answer, as
 * Elasticsearch answers a bad `pretty` with a 400 written without the request's parameters.
 */
export function lenientResponseOptionsOf(url: string | undefined): ResponseOptions {
  if (url === undefined) return PLAIN_RESPONSE;
  try {
    return responseOptionsOf(url);
  } catch {
    return PLAIN_RESPONSE;
  }
}

/** Strings.tokenizeByCommaToSet: split on commas, empty pieces dropped, no trimming (FilterPath trims). */
function tokens(value: string | undefined): string[] {
  if (value === undefined) return [];
  return [...new Set(value.split(',').filter((piece) => piece !== ''))];
}

/** RestRequest.paramAsBoolean: absent or blank is false, present and empty is true. */
function booleanParam(value: string | undefined): boolean {
  if (value === undefined || (value !== '' && value.trim() === '')) return false;
  if (value === '' || value === 'true') return true;
  if (value === 'false') return false;
  throw new ProxyError('BAD_REQUEST', `Failed to parse value [${value}] as only [true] or [false] are allowed.`);
}
