import { type BulkItemAnswer, UpstreamItem } from '../upstream-item.js';

/**
 * Elasticsearch answers an `index` item sent as a create (the proxy's fence for a missing
 * document) under the key `create`; the client asked for `index` and gets its answer under that
 * key, as Elasticsearch would have answered the item it sent.
 */
export function answeredAsSent(answer: BulkItemAnswer, sentAsCreate: boolean): BulkItemAnswer {
  if (!sentAsCreate) return answer;
  // Renamed in its bytes: parsing it would round numbers beyond 2^53 (an external version).
  if (answer instanceof UpstreamItem) return answer.action() === 'create' ? answer.renamed('index') : answer;
  const created = answer.create;
  if (created === undefined) return answer;
  return { index: created };
}
