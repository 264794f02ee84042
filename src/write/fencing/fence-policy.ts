import type { BulkAction } from '../../classify/bulk-parser.js';
import type { FenceableAction } from './fence.js';

/**
 * Which writes the proxy fences (proxy.fencing=on). Not fenced, and forwarded as they came:
 * - creates (`_create`, `op_type=create`, bulk `create`): Elasticsearch already refuses them for
 *   an existing document;
 * - writes carrying their own concurrency control (`if_seq_no`, `if_primary_term`, `version`,
 *   `version_type`): their own check fences them, and Elasticsearch refuses a second one;
 * - updates with `retry_on_conflict` > 0, `upsert`, `doc_as_upsert` or `scripted_upsert`:
 *   Elasticsearch refuses them combined with `if_seq_no`.
 */

/** Parameters (query or bulk metadata) through which a request brings its own concurrency control. */
const OWN_CONCURRENCY_CONTROL: readonly string[] = ['if_seq_no', 'if_primary_term', 'version', 'version_type'];

/** The parameters of one write that matter here: query parameters, or a bulk action line's metadata. */
export type ParamLookup = (name: string) => string | undefined;

/** Whether an `op_type` value makes an index a create, as Elasticsearch reads it where it came from. */
export type OpTypeRule = (value: string) => boolean;

/** A query's `op_type`, in any case (Elasticsearch: server/src/main/java/org/elasticsearch/action/index/IndexRequest.java, `opType(String)`). */
export const QUERY_OP_TYPE: OpTypeRule = (value) => value.toLowerCase() === 'create';

/**
 * A bulk item's `op_type`, exactly: any other value ("CREATE", "bogus") makes an index
 * (Elasticsearch: server/src/main/java/org/elasticsearch/action/bulk/BulkRequestParser.java, `create("create".equals(opType))`).
 */
export const BULK_OP_TYPE: OpTypeRule = (value) => value === 'create';

/** The fenceable action of a write, or `null` when it is forwarded unfenced. `updateBody` only for updates. */
export function fenceableAction(action: BulkAction, param: ParamLookup, updateBody: () => Buffer | null, opTypeCreates: OpTypeRule): FenceableAction | null {
  if (action === 'create') return null;
  if (OWN_CONCURRENCY_CONTROL.some((name) => param(name) !== undefined)) return null;
  if (action === 'index') {
    const opType = param('op_type');
    return opType !== undefined && opTypeCreates(opType) ? null : 'index';
  }
  if (action === 'delete') return 'delete';
  if (retriesOnConflict(param('retry_on_conflict'))) return null;
  return updateCannotBeFenced(updateBody()) ? null : 'update';
}

function retriesOnConflict(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '' && Number(value) !== 0;
}

/**
 * An update body asking for an upsert cannot carry `if_seq_no`. A body that is not a JSON object
 * is left to Elasticsearch, which refuses it without writing: no fence needed.
 */
function updateCannotBeFenced(body: Buffer | null): boolean {
  if (body === null) return true;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return true;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return true;
  const fields = parsed as Record<string, unknown>;
  return (fields.upsert !== undefined && fields.upsert !== null) || isTrue(fields.doc_as_upsert) || isTrue(fields.scripted_upsert);
}

/** Elasticsearch's `booleanValue()` takes the string too. */
function isTrue(value: unknown): boolean {
  return value === true || value === 'true';
}
