import type { KeyedBulkItem } from '../bulk-items.js';
import type { Fence } from './fence.js';
import { fencedActionLine } from './action-line-fence.js';
import type { FenceableItem } from './fenceable-item.js';

/** A sub-bulk body with fences written in, and the items Elasticsearch will answer under `create`. */
export interface FencedBody {
  readonly body: Buffer;
  /** Positions of `index` items sent as creates (missing document): their answer is renamed back to `index`. */
  readonly sentAsCreate: ReadonlySet<number>;
}

/**
 * The items' lines in the order given, each ending in `\n`; an item with a fence has its action
 * line rewritten (action-line-fence.ts), every other byte is the client's.
 */
export function fencedBulkBody(
  body: Buffer,
  items: readonly KeyedBulkItem[],
  fences: ReadonlyMap<number, { readonly fenceable: FenceableItem; readonly fence: Fence }>,
): FencedBody {
  const parts: Buffer[] = [];
  const sentAsCreate = new Set<number>();
  const newline = Buffer.from('\n');
  for (const { item } of items) {
    const fenced = fences.get(item.position);
    if (fenced === undefined) parts.push(body.subarray(item.actionLineStart, item.actionLineEnd + 1));
    else {
      parts.push(fencedActionLine(body, item.actionLineStart, item.actionLineEnd, fenced.fenceable.meta, fenced.fence), newline);
      if (fenced.fence.kind === 'create' && item.action === 'index') sentAsCreate.add(item.position);
    }
    if (item.sourceLineStart !== null && item.sourceLineEnd !== null) parts.push(body.subarray(item.sourceLineStart, item.sourceLineEnd + 1));
  }
  return { body: Buffer.concat(parts), sentAsCreate };
}
