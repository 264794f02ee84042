/**
 * What the bench's raw-client locks (the ZooKeeper floor, the bare proxy with the least lock)
 * share: the proxy's node data in `privateLock`, and their roots under one persistent node.
 */
import { hostname } from 'node:os';
import { encodeNodeData } from '../src/lock/lock-node-data.js';
import type { ZkClient } from '../src/zookeeper-client/zk-client.js';
import { isZkCode } from '../src/zookeeper-client/zk-errors.js';

export const BENCH_ROOT = '/es-lock-proxy-bench';

/** A foreground `privateLock`'s data as the proxy writes it, for a request `message`. */
export function benchLockData(message: string): string {
  return encodeNodeData({
    guid: '00000000-0000-4000-8000-000000000000',
    owner: { host: hostname(), pid: process.pid, requestId: '00000000-0000-4000-8000-000000000000' },
    priority: 'foreground',
    acquiredAt: Date.now(),
    message,
    entry: null,
  });
}

/** Creates `BENCH_ROOT` and `root` under it, if missing. */
export async function ensureBenchRoot(client: ZkClient, root: string): Promise<void> {
  for (const path of [BENCH_ROOT, root]) {
    await client.create(path, '', 'persistent').catch((error: unknown) => {
      if (!isZkCode(error, 'NODEEXISTS')) throw error;
    });
  }
}
