import type { KeyedBulkItem } from '../bulk-items.js';
import type { FenceableAction } from './fence.js';
import { readActionMetadata, type ActionMetadata } from './action-metadata.js';
import { BULK_OP_TYPE, fenceableAction } from './fence-policy.js';

/** A bulk item the proxy fences, with what its action line already says. */
export interface FenceableItem {
  readonly keyed: KeyedBulkItem;
  readonly action: FenceableAction;
  readonly meta: ActionMetadata;
  readonly routing: string | null;
}

/** The items of `items` to fence (see fence-policy.ts), by position. Items without a lock key are never fenced. */
export function fenceableItems(body: Buffer, items: readonly KeyedBulkItem[]): Map<number, FenceableItem> {
  const fenceable = new Map<number, FenceableItem>();
  for (const keyed of items) {
    if (keyed.key === null) continue;
    const { item } = keyed;
    const meta = readActionMetadata(body, item.actionLineStart, item.actionLineEnd);
    const sourceLine = (): Buffer | null =>
      item.sourceLineStart === null || item.sourceLineEnd === null ? null : body.subarray(item.sourceLineStart, item.sourceLineEnd);
    const action = fenceableAction(item.action, (name) => meta.values.get(name)?.text, sourceLine, BULK_OP_TYPE);
    if (action !== null) fenceable.set(item.position, { keyed, action, meta, routing: meta.values.get('routing')?.text ?? null });
  }
  return fenceable;
}
