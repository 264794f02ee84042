import { newStats } from '../../src/lock/lock-stats.js';
import { ZkClient } from '../../src/zookeeper-client/zk-client.js';

export interface RawZkConnection {
  readonly client: ZkClient;
  close(): Promise<void>;
}

/**
 * A plain connected handle for tools and tests that must look at (or act on) the znodes
 * directly, e.g. a client of the original locking algorithm.
 */
export async function connectRawClient(servers: string, sessionTimeoutMs: number, connectTimeoutMs = 10_000): Promise<RawZkConnection> {
  const client = new ZkClient({ servers, sessionTimeoutMs }, newStats());
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void client.close();
      reject(new Error(`no ZooKeeper connection to ${servers} within ${connectTimeoutMs} ms`));
    }, connectTimeoutMs);
    client.once('connect', () => {
      clearTimeout(timer);
      resolve();
    });
    client.connect();
  });
  return {
    client,
    close: () => client.close(),
  };
}
