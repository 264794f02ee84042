import { type BulkItemAnswer, resultOf } from '../upstream-item.js';

/**
 * Elasticsearch answers an `index` item sent as a create (the proxy's fence for a missing
 * document) under the key `create`; the client asked for `index` and gets its answer under that
 * key, as Elasticsearch would have answered the item it sent.
 */
export function answeredAsSent(answer: BulkItemAnswer, sentAsCreate: boolean): BulkItemAnswer {
  if (!sentAsCreate) return answer;
  const created = resultOf(answer).create;
  if (created === undefined) return answer;
  return { index: created };
}
