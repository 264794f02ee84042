import type { UpstreamResponse } from '../elasticsearch/upstream-forwarder.js';
import type { BulkItemResult, KeyedBulkItem } from './bulk-items.js';
import type { BulkRun } from './bulk-run.js';

type JsonRecord = Record<string, unknown>;

/**
 * A later sub-bulk that Elasticsearch refused as a whole (429 rejected execution, 503 cluster
 * block, 403 …): Elasticsearch answered, so none of its items was applied. Each item gets the
 * refusal's status and Elasticsearch's error, as Elasticsearch writes an item's failure, so that a
 * client retries them as it would retry those items: the official bulk helpers retry per-item
 * 429s (and, in Python, whatever `retry_on_status` names), never 502s. A reset or a timeout is
 * not a refusal: its items stay 502/504, for they may have been applied.
 */
export interface SubBulkRefusal {
  readonly status: number;
  readonly error: JsonRecord;
}

/** How one sub-bulk (or fenced wave) sent to Elasticsearch ended. */
export type SubBulkOutcome =
  /** Its items have their results. */
  | 'ok'
  /** The first call of the request was refused whole: the client gets that answer (`run.refusal`). */
  | 'answered'
  /** A later call was refused whole: its items have the refusal. */
  | { readonly refused: SubBulkRefusal };

export function refusalOf(upstream: UpstreamResponse): SubBulkRefusal {
  return { status: upstream.status, error: refusalError(upstream) };
}

export function recordRefusal(run: BulkRun, items: readonly KeyedBulkItem[], refusal: SubBulkRefusal): void {
  for (const keyed of items) run.results.set(keyed.item.position, refusedItem(keyed, refusal));
}

function refusedItem(keyed: KeyedBulkItem, { status, error }: SubBulkRefusal): BulkItemResult {
  return { [keyed.item.action]: { _index: keyed.item.index, _id: keyed.item.id, status, error } };
}

/**
 * The `error` object of Elasticsearch's REST error body, without `root_cause`: an item's error
 * has none (Elasticsearch: server/src/main/java/org/elasticsearch/action/bulk/BulkItemResponse.java,
 * `Failure.toXContent` writes the cause with `generateThrowableXContent`). A body not in that
 * shape (a load balancer's page) is named by its status.
 */
function refusalError(upstream: UpstreamResponse): JsonRecord {
  const body = parsed(upstream.body);
  const error = body?.error;
  if (isRecord(error) && typeof error.type === 'string') {
    const { root_cause: _rootCause, ...fields } = error;
    return fields;
  }
  const reason = typeof error === 'string' ? error : `Elasticsearch refused a sub-bulk of this request with ${upstream.status}`;
  return { type: 'status_exception', reason };
}

function parsed(body: Buffer): JsonRecord | null {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
