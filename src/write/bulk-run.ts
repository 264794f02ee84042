import { ERROR_CODES } from '../errors/error-codes.js';
import type { ProxyError } from '../errors/proxy-error.js';
import type { UpstreamResponse } from '../elasticsearch/upstream-forwarder.js';
import type { ResolvedName } from './alias-resolver.js';
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
  /** The date-math names of the items as resolved when they were keyed (the others cannot change). */
  readonly dateMathNames: ReadonlyMap<string, ResolvedName>;
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

/**
 * Whether the item's date-math `_index` names another index now than when it was keyed: its lock
 * wait crossed a boundary of the name (a day's end for `{now/d}`), so Elasticsearch would write
 * another document than the one locked.
 */
export function crossedDateMathBoundary(run: BulkRun, keyed: KeyedBulkItem): boolean {
  if (keyed.key === null || run.dateMathNames.size === 0) return false;
  const resolved = run.dateMathNames.get(keyed.item.index);
  return resolved !== undefined && !run.deps.aliases.stillResolvesTo(keyed.item.index, resolved);
}

/** Items answered by the proxy with `error`'s status and type. */
export function recordFailure(run: BulkRun, items: readonly KeyedBulkItem[], error: ProxyError): void {
  const { status, type } = ERROR_CODES[error.code];
  for (const keyed of items) run.results.set(keyed.item.position, proxyItemResult(keyed, status, type, error.message));
}
