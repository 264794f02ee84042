/**
 * Shard routing as far as the stand-in models it: an index may have several shards, a document
 * lives on the shard its routing (else its id) picks, and a realtime read by id with another
 * routing looks on another shard and does not find it — what a read with the wrong routing gets
 * from Elasticsearch. Elasticsearch hashes with Murmur3 (IndexRouting.java); any deterministic
 * hash shows the same behaviour, and `shardFor` lets a test pick values on different shards.
 *
 * Writes follow Elasticsearch's routing resolution: the action line's `routing`, else the bulk
 * URL's, then an alias's `index_routing` in its place. Elasticsearch:
 * server/src/main/java/org/elasticsearch/action/bulk/BulkRequestParser.java (the URL routing as the
 * default of each item), server/src/main/java/org/elasticsearch/cluster/metadata/Metadata.java
 * (`resolveWriteIndexRouting`).
 */
export function shardFor(routingOrId: string, shards: number): number {
  let hash = 0;
  for (let i = 0; i < routingOrId.length; i++) hash = (hash * 31 + routingOrId.charCodeAt(i)) >>> 0;
  return hash % shards;
}

/** Where each document of the stand-in lives, and how many shards each index has (1 unless set). */
export class ShardPlacement {
  private readonly shardCounts = new Map<string, number>();
  private readonly placed = new Map<string, number>();

  setShards(index: string, shards: number): void {
    this.shardCounts.set(index, shards);
  }

  /** Records the shard of a document just written with `routing` (null: by its id). */
  place(index: string, id: string, routing: string | null): void {
    this.placed.set(`${index}\u0000${id}`, this.shardOf(index, id, routing));
  }

  /** Whether a read of `id` with `routing` looks on the shard the document was written to. */
  readsSameShard(index: string, id: string, routing: string | null): boolean {
    const placed = this.placed.get(`${index}\u0000${id}`);
    return placed === undefined || placed === this.shardOf(index, id, routing);
  }

  private shardOf(index: string, id: string, routing: string | null): number {
    return shardFor(routing ?? id, this.shardCounts.get(index) ?? 1);
  }
}
