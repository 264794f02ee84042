import { keyString } from '../../lock/lock-key.js';
import type { KeyedBulkItem } from '../bulk-items.js';
import type { BulkRun } from '../bulk-run.js';
import { recordRefusal, type SubBulkRefusal } from '../sub-bulk-refusal.js';
import { resultOf, UpstreamItem } from '../upstream-item.js';

/** Item statuses of a rejection on the document's shard: Elasticsearch applied none of its shard request. */
const REJECTIONS: ReadonlySet<number> = new Set([429, 503]);

/**
 * The documents of a fenced sub-bulk whose item Elasticsearch rejected (429
 * es_rejected_execution_exception, 503 unavailable shards). Such a rejection takes the whole shard
 * request: in one bulk, every later item of that document would have been rejected with it. Sent
 * in a later wave, such an item would be applied, under the rejected one the client retries.
 * So a document's later items get its rejection, unsent.
 */
export class RejectedDocuments {
  private readonly rejections = new Map<string, SubBulkRefusal>();

  /** The wave's items to send; those of rejected documents are answered with the rejection. */
  holdBack(run: BulkRun, wave: readonly KeyedBulkItem[]): KeyedBulkItem[] {
    const kept: KeyedBulkItem[] = [];
    for (const keyed of wave) {
      const rejection = keyed.key === null ? undefined : this.rejections.get(keyString(keyed.key));
      if (rejection === undefined) kept.push(keyed);
      else recordRefusal(run, [keyed], rejection);
    }
    return kept;
  }

  /** Notes the documents whose item of this wave was rejected. */
  note(run: BulkRun, wave: readonly KeyedBulkItem[]): void {
    for (const keyed of wave) {
      const answer = run.results.get(keyed.item.position);
      // Elasticsearch's items that did not fail are not parsed.
      if (keyed.key === null || answer === undefined || (answer instanceof UpstreamItem && !answer.failed)) continue;
      const [outcome] = Object.values(resultOf(answer));
      const status = Number(outcome?.status);
      if (outcome === undefined || !REJECTIONS.has(status) || !isRecord(outcome.error)) continue;
      this.rejections.set(keyString(keyed.key), { status, error: outcome.error });
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
