import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ThrottledRefusal } from '../auth/known-refusal.js';
import type { WriteRequest, WriteRoute } from '../write/write-request.js';
import type { ContentCoding } from './body/content-coding.js';

/**
 * One client write as the proxy port hands it over: the write path's request plus the client's
 * response, which only the edge writes (the write path answers with a `WriteOutcome`).
 */
export interface InterceptedRequest extends WriteRequest {
  readonly res: ServerResponse;
  readonly inflatedFrom: InflatedFrom | null;
}

export interface InflatedFrom {
  readonly coding: ContentCoding;
  readonly bytes: Buffer;
}

/**
 * The write path as the proxy port calls it (write-edge.ts): answers every request it is handed.
 * A rejection is answered in Elasticsearch's error shape (or the connection is cut when the
 * response had already started).
 */
export type WriteInterceptor = ((request: InterceptedRequest) => Promise<void>) & {
  /** An answer decided from the request head alone, given before any of the body is read (src/auth/known-refusal.ts). */
  readonly refusalBeforeBody?: RefusalBeforeBody;
};

export type RefusalBeforeBody = (route: WriteRoute, req: IncomingMessage) => ThrottledRefusal | null;

/** Routes whose body the write path needs whole. */
export function readsBodyWhole(route: WriteRoute): boolean {
  return route.kind === 'single' || route.kind === 'bulk';
}
