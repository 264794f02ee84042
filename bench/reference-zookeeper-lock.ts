/**
 * The least a ZooKeeper lock can add to a write that goes through a proxy: the bare reference
 * proxy (reference-proxy-process.ts) taking the proxy's own node layout for each document write
 * with the raw client — the document container and its ephemeral `privateLock` in one
 * transaction before forwarding, both deleted in one transaction, not awaited, once the answer
 * has gone back. No queue, no priorities, no fencing, no error handling: a floor, not a lock. A
 * write that finds the document taken tries again on the next turn of the event loop, which is
 * only sound for the uncontended workloads it serves (`open-loop`).
 */
import { connectRawClient } from '../test/support/zk-raw-client.js';
import { isZkCode } from '../src/zookeeper/zk-errors.js';
import type { ZkClient } from '../src/zookeeper/zk-client.js';
import type { ZkOp } from '../src/zookeeper/zk-multi.js';
import { BENCH_ROOT, benchLockData, ensureBenchRoot } from './bench-lock-nodes.js';

export const REFERENCE_LOCK_ROOT = `${BENCH_ROOT}/reference-lock`;

/** `/{index}/_doc|_create|_update/{id}` (the single-document writes the bench sends). */
const DOCUMENT_WRITE = /^\/([^/_?][^/?]*)\/_(?:doc|create|update)\/([^/?]+)/;

const DATA = benchLockData('PUT /bench-open-loop/_doc/00000000');

export interface ReferenceLock {
  /** The lock's node for a document write, `null` for any other request. */
  documentOf(method: string | undefined, url: string | undefined): string | null;
  acquire(document: string): Promise<void>;
  /** Sent, not awaited: the client's answer does not wait for it (neither does the proxy's). */
  release(document: string): void;
}

export async function connectReferenceLock(zookeeper: string): Promise<ReferenceLock> {
  const { client } = await connectRawClient(zookeeper, 10_000);
  await ensureBenchRoot(client, REFERENCE_LOCK_ROOT);
  return {
    documentOf: (method, url) => {
      if (method !== 'PUT' && method !== 'POST' && method !== 'DELETE') return null;
      const match = DOCUMENT_WRITE.exec(url ?? '');
      return match === null ? null : `${REFERENCE_LOCK_ROOT}/${encodeURIComponent(`${match[1]}/${match[2]}`)}`;
    },
    acquire: (document) => acquire(client, document),
    release: (document) => {
      const ops: ZkOp[] = [{ type: 'delete', path: `${document}/privateLock` }, { type: 'delete', path: document }];
      client.multi(ops).catch(() => undefined);
    },
  };
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
