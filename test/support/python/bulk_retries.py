"""Sends one document per id with Debian's python3-elasticsearch helpers.streaming_bulk.

Usage: bulk_retries.py <proxy url> <index> <ids, comma-separated>

One chunk, items answered 429 retried (max_retries=3, short backoff), nothing raised. Prints one
JSON line: the client's version and each result's ok and status.
"""

import json
import sys

import elasticsearch
from elasticsearch import Elasticsearch, helpers


def main() -> None:
    url, index, ids = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    client = Elasticsearch([url], max_retries=0)
    actions = ({"_op_type": "index", "_index": index, "_id": doc_id, "_source": {"id": doc_id, "from": "python"}} for doc_id in ids)
    results = [
        {"ok": ok, "status": list(item.values())[0].get("status")}
        for ok, item in helpers.streaming_bulk(
            client, actions, chunk_size=500, max_retries=3, initial_backoff=0.05, max_backoff=0.2, raise_on_error=False
        )
    ]
    print(json.dumps({"version": elasticsearch.__versionstr__, "results": results}))


if __name__ == "__main__":
    main()
