/**
 * The routing Elasticsearch writes a document with, which a fence's read must name too (a read
 * with another routing looks on another shard and misses the document):
 * - in a bulk, the action line's `routing`, else the URL's `?routing=` (the default of every item);
 *   for a single write, the URL's;
 * - then, for a write through an alias whose write index has an `index_routing`, that routing in
 *   its place (a request routing that differs from it is refused by Elasticsearch, so no read
 *   matters then).
 * Elasticsearch: server/src/main/java/org/elasticsearch/action/bulk/BulkRequestParser.java
 * (`defaultRouting`), server/src/main/java/org/elasticsearch/cluster/metadata/Metadata.java
 * (`resolveWriteIndexRouting`, `resolveRouting`).
 */
export function writeRoutingOf(requestRouting: string | null, defaultRouting: string | null, aliasIndexRouting: string | null): string | null {
  return aliasIndexRouting ?? requestRouting ?? defaultRouting;
}
