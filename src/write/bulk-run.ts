import { ERROR_CODES } from '../errors/error-codes.js';
import type { ProxyError } from '../errors/proxy-error.js';
import type { UpstreamResponse } from '../forwarding/upstream-forwarder.js';
import type { WriteRequest } from './write-request.js';
import type { Priority } from '../lock/lock-engine.js';
import { type KeyedBulkItem, proxyItemResult } from './bulk-items.js';
import type { BulkItemAnswer } from './upstream-item.js';
import type { WritePathDeps } from './write-path-deps.js';

/** State of one bulk request across its lock rounds. */
export interface BulkRun {
  readonly deps: WritePathDeps;
  readonly exchange: WriteRequest;
  readonly priority: Priority;
  readonly defaultIndex: string | null;
  readonly items: readonly KeyedBulkItem[];
  /** Per item position: Elasticsearch's result, or the proxy's own. */
  readonly results: Map<number, BulkItemAnswer>;
  took: number;
  /** Distinct documents the request names (counted by its first round): what its report gives. */
  documents: number;
  readonly attemptTimes: number[];
  forwardedAnything: boolean;
  waitMs: number;
  holdMs: number;
  lastUpstreamStatus: number | null;
  /** Elasticsearch refused the first sub-bulk as a whole: the client gets this answer. */
  refusal: UpstreamResponse | null;
}

/** Items answered by the proxy with `error`'s status and type. */
export function recordFailure(run: BulkRun, items: readonly KeyedBulkItem[], error: ProxyError): void {
  const { status, type } = ERROR_CODES[error.code];
  for (const keyed of items) run.results.set(keyed.item.position, proxyItemResult(keyed, status, type, error.message));
}
