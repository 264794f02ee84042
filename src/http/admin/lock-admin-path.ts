import { ProxyError } from '../../errors/proxy-error.js';
import type { LockKey } from '../../lock/lock-engine.js';

/** What a request below `/locks` addresses: the collection, or one document's lock. */
export type LockAdminTarget = { readonly kind: 'collection' } | { readonly kind: 'key'; readonly key: LockKey };

/**
 * Reads the raw path below `/locks` the way Elasticsearch reads document paths: split on `/`
 * first, then percent-decode each segment once, so an id containing `/` arrives as `%2F`.
 * A trailing slash is tolerated.
 */
export function parseLockAdminPath(rawPathBelowLocks: string): LockAdminTarget {
  const trimmed = rawPathBelowLocks.replace(/^\//, '').replace(/\/$/, '');
  if (trimmed === '') return { kind: 'collection' };
  const segments = trimmed.split('/');
  const [index, id] = segments.map(decodeSegment);
  if (segments.length !== 2 || index === undefined || id === undefined || index === '' || id === '') {
    throw new ProxyError(
      'BAD_REQUEST',
      `expected /locks/{index}/{id} (encode a '/' inside an id as %2F), got /locks${rawPathBelowLocks}`,
    );
  }
  return { kind: 'key', key: { index, id } };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch (error) {
    throw new ProxyError('BAD_REQUEST', `path segment [${segment}] is not valid percent-encoding`, { cause: error });
  }
}

/** Splits `req.url` (relative to the mount point) into its raw path and its query. */
export function splitUrl(url: string): { readonly path: string; readonly query: URLSearchParams } {
  const queryStart = url.indexOf('?');
  if (queryStart < 0) return { path: url, query: new URLSearchParams() };
  return { path: url.slice(0, queryStart), query: new URLSearchParams(url.slice(queryStart + 1)) };
}

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

/** `GET /locks?index=NAME&limit=N`: the index is required, the limit bounded. */
export function parseListQuery(query: URLSearchParams): { readonly index: string; readonly limit: number } {
  const index = query.get('index');
  if (index === null || index === '') {
    throw new ProxyError('BAD_REQUEST', 'listing locks needs an index: GET /locks?index=NAME[&limit=N]');
  }
  return { index, limit: parseLimit(query.get('limit')) };
}

function parseLimit(raw: string | null): number {
  if (raw === null || raw === '') return DEFAULT_LIST_LIMIT;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new ProxyError('BAD_REQUEST', `limit must be a positive integer (at most ${MAX_LIST_LIMIT}), got [${raw}]`);
  }
  return Math.min(Number(raw), MAX_LIST_LIMIT);
}
