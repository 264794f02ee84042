/**
 * The least a ZooKeeper lock can add to a write that goes through a proxy: the bare reference
 * proxy (reference-proxy-process.ts) taking the proxy's own node layout for each document write
 * with the raw client — the document container and its ephemeral `privateLock` in one
 * transaction before forwarding, both deleted in one transaction, not awaited, once the answer
 * has gone back. No queue, no priorities, no fencing, no error handling: a floor, not a lock. A
 * write that finds the document taken tries again on the next turn of the event loop, which is
 * only sound for the uncontended workloads it serves (`open-loop`, and `bulk-streams`, whose bulks
 * name fresh documents). A `_bulk` takes all its documents in one transaction and releases them in
 * one, as the design's floor does (zookeeper-floor.ts), but with the bulk in between.
 */
import { connectRawClient } from '../test/support/zk-raw-client.js';
import { isZkCode } from '../src/zookeeper-client/zk-errors.js';
import type { ZkClient } from '../src/zookeeper-client/zk-client.js';
import type { ZkOp } from '../src/zookeeper-client/zk-multi.js';
import { BENCH_ROOT, benchLockData, ensureBenchRoot } from './bench-lock-nodes.js';

export const REFERENCE_LOCK_ROOT = `${BENCH_ROOT}/reference-lock`;

/** `/{index}/_doc|_create|_update/{id}` (the single-document writes the bench sends). */
const DOCUMENT_WRITE = /^\/([^/_?][^/?]*)\/_(?:doc|create|update)\/([^/?]+)/;
/** An action line of the bench's bulks: `{"index":{"_index":"…","_id":"…"}}`. */
const BULK_ACTION = /\{"(?:index|create|update|delete)":\{"_index":"([^"]+)","_id":"([^"]+)"\}\}/g;

const DATA = benchLockData('PUT /bench-open-loop/_doc/00000000');

export interface ReferenceLock {
  /** The lock's node for a document write, `null` for any other request. */
  documentOf(method: string | undefined, url: string | undefined): string | null;
  acquire(document: string): Promise<void>;
  /** Sent, not awaited: the client's answer does not wait for it (neither does the proxy's). */
  release(document: string): void;
  /** Whether the request is a `_bulk` (its body names the documents). */
  isBulk(method: string | undefined, url: string | undefined): boolean;
  /** The lock nodes of the documents a bulk body names (empty for a bulk without ids). */
  documentsOfBulk(body: string): string[];
  /** All of them in one transaction (falls back to one by one should that be refused). */
  acquireAll(documents: readonly string[]): Promise<void>;
  /** All of them in one transaction, sent, not awaited. */
  releaseAll(documents: readonly string[]): void;
}

function nodeOf(index: string, id: string): string {
  return `${REFERENCE_LOCK_ROOT}/${encodeURIComponent(`${index}/${id}`)}`;
}

function releaseOps(document: string): ZkOp[] {
  return [{ type: 'delete', path: `${document}/privateLock` }, { type: 'delete', path: document }];
}

export async function connectReferenceLock(zookeeper: string): Promise<ReferenceLock> {
  const { client } = await connectRawClient(zookeeper, 10_000);
  await ensureBenchRoot(client, REFERENCE_LOCK_ROOT);
  return {
    documentOf: (method, url) => {
      if (method !== 'PUT' && method !== 'POST' && method !== 'DELETE') return null;
      const match = DOCUMENT_WRITE.exec(url ?? '');
      return match === null ? null : nodeOf(match[1] ?? '', match[2] ?? '');
    },
    acquire: (document) => acquire(client, document),
    release: (document) => {
      client.multi(releaseOps(document)).catch(() => undefined);
    },
    isBulk: (method, url) => method === 'POST' && /^\/(?:[^/?]+\/)?_bulk(?:\?|$)/.test(url ?? ''),
    documentsOfBulk: (body) => [...new Set(Array.from(body.matchAll(BULK_ACTION), (m) => nodeOf(m[1] ?? '', m[2] ?? '')))],
    acquireAll: (documents) => acquireAll(client, documents),
    releaseAll: (documents) => {
      if (documents.length > 0) client.multi(documents.flatMap(releaseOps)).catch(() => undefined);
    },
  };
}

async function acquireAll(client: ZkClient, documents: readonly string[]): Promise<void> {
  if (documents.length === 0) return;
  const ops = documents.flatMap((document): ZkOp[] => [
    { type: 'create', path: document, mode: 'container' },
    { type: 'create', path: `${document}/privateLock`, data: DATA, mode: 'ephemeral' },
  ]);
  try {
    await client.multi(ops);
  } catch {
    for (const document of documents) await acquire(client, document);
  }
}

async function acquire(client: ZkClient, document: string): Promise<void> {
  const privateLock: ZkOp = { type: 'create', path: `${document}/privateLock`, data: DATA, mode: 'ephemeral' };
  let containerExists = false;
  for (;;) {
    try {
      await client.multi(containerExists ? [privateLock] : [{ type: 'create', path: document, mode: 'container' }, privateLock]);
      return;
    } catch (error) {
      if (isZkCode(error, 'NONODE')) containerExists = false;
      else if (isZkCode(error, 'NODEEXISTS')) containerExists = true;
      else throw error;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
