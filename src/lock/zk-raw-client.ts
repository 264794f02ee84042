import ZooKeeper from 'zookeeper';
import { newStats } from './lock-stats.js';
import { ZkClient } from './zk-client.js';

export interface RawZkConnection {
  readonly client: ZkClient;
  close(): Promise<void>;
}

/**
 * A plain connected handle for tools and tests that must look at (or act on) the znodes
 * directly, e.g. a client of the original locking algorithm. Keeps `zookeeper` fenced in here.
 */
export async function connectRawClient(servers: string, sessionTimeoutMs: number, connectTimeoutMs = 10_000): Promise<RawZkConnection> {
  const zk = new ZooKeeper({ connect: servers, timeout: sessionTimeoutMs, debug_level: 0 });
  const client = new ZkClient(zk, newStats());
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      zk.close();
      reject(new Error(`no ZooKeeper connection to ${servers} within ${connectTimeoutMs} ms`));
    }, connectTimeoutMs);
    zk.once('connect', () => {
      clearTimeout(timer);
      resolve();
    });
    zk.init({});
  });
  return {
    client,
    close: () => client.close(),
  };
}
