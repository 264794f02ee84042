import { type PrefixRanks, queueFromChildren, rankOf } from '../queue-order.js';
import type { ForeignQueue } from './handover-policy.js';

export const UNKNOWN_FOREIGN_QUEUE: ForeignQueue = { known: false, count: 0, bestRank: Number.POSITIVE_INFINITY };

/** Other processes' (or seed clients') entries among `children`: every entry but ours. */
export function foreignQueueOf(children: readonly string[], ownEntry: string | null, prefixes: PrefixRanks): ForeignQueue {
  let count = 0;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const entry of queueFromChildren(children, prefixes)) {
    if (entry.name === ownEntry) continue;
    count++;
    bestRank = Math.min(bestRank, rankOf(entry.prefix, prefixes));
  }
  return { known: true, count, bestRank };
}
