"""Writes through the proxy with Debian's python3-elasticsearch client and http_compress=True.

Usage: compressed_writes.py <proxy url> <index> <bulk ids, comma-separated>

Indexes, updates and deletes single documents, then sends one document per bulk id with
helpers.streaming_bulk, retrying the items answered 429. Prints one JSON line: the client's
version and each streaming_bulk result.
"""

import json
import sys

import elasticsearch
from elasticsearch import Elasticsearch, helpers


def main() -> None:
    url, index, ids = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    client = Elasticsearch([url], http_compress=True, max_retries=0)
    client.index(index=index, id="single-a", document={"name": "lamp", "n": 1})
    client.index(index=index, id="single-b", document={"name": "desk"})
    client.update(index=index, id="single-a", doc={"n": 2})
    client.delete(index=index, id="single-b")
    actions = ({"_op_type": "index", "_index": index, "_id": doc_id, "_source": {"id": doc_id, "from": "bulk"}} for doc_id in ids)
    results = [
        {"ok": ok, "status": list(item.values())[0].get("status")}
        for ok, item in helpers.streaming_bulk(
            client, actions, chunk_size=50, max_retries=20, initial_backoff=0.05, max_backoff=0.2, raise_on_error=False
        )
    ]
    print(json.dumps({"version": elasticsearch.__versionstr__, "results": results}))


if __name__ == "__main__":
    main()
