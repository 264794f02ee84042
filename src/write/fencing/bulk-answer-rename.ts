import type { BulkItemResult } from '../bulk-items.js';

/**
 * Elasticsearch answers an `index` item sent as a create (the proxy's fence for a missing
 * document) under the key `create`; the client asked for `index` and gets its answer under that
 * key, as Elasticsearch would have answered the item it sent.
 */
export function answeredAsSent(result: BulkItemResult, sentAsCreate: boolean): BulkItemResult {
  const created = result.create;
  if (!sentAsCreate || created === undefined) return result;
  return { index: created };
}
