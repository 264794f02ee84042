import { isZkCode } from '../../src/zookeeper-client/zk-errors.js';
import { connectRawClient, type RawZkConnection } from './zk-raw-client.js';
import { fourLetterWord, restartNode, startZooKeeper, type StartOptions, type ZooKeeperCluster, type ZooKeeperNode } from './zookeeper-server.js';

/**
 * Fault-test helpers over `startZooKeeper`: a three-node ensemble with a small tick, and ways to
 * stop one node, the leader or all of them and to wait until a quorum serves again.
 */
export interface Ensemble {
  readonly cluster: ZooKeeperCluster;
  readonly connectString: string;
  /** Kills the node `srvr` reports as leader (SIGKILL, as a crash) and returns it. */
  stopLeader(): Promise<ZooKeeperNode>;
  stopNode(node: ZooKeeperNode): Promise<void>;
  startNode(node: ZooKeeperNode): Promise<void>;
  stopAll(): Promise<void>;
  /** Starts every stopped node at once (one alone cannot form a quorum) and waits for a leader. */
  startAll(): Promise<void>;
  /** Resolves once the running nodes have one leader and the rest follow it. */
  waitForQuorum(timeoutMs?: number): Promise<ZooKeeperNode>;
  stop(): Promise<void>;
}

/** Small ticks keep elections and session expiry within a test's seconds. */
export const FAULT_TEST_TICK_MS = 200;

export async function startEnsemble(size = 3, options: StartOptions = {}): Promise<Ensemble> {
  // No fsync: these tests are about failures of processes, not of disks, and fsync on three
  // nodes would make the load (and so each test) several times slower.
  const cluster = await startZooKeeper(size, {
    tickTimeMs: FAULT_TEST_TICK_MS,
    ...options,
    systemProperties: { 'zookeeper.forceSync': 'no', ...options.systemProperties },
  });
  const ensemble: Ensemble = {
    cluster,
    connectString: cluster.connectString,
    async stopLeader() {
      const leader = await ensemble.waitForQuorum();
      await leader.stop('SIGKILL');
      return leader;
    },
    stopNode: (node) => node.stop('SIGKILL'),
    startNode: (node) => restartNode(node),
    stopAll: async () => {
      await Promise.all(cluster.nodes.map((node) => node.stop('SIGKILL')));
    },
    async startAll() {
      await Promise.all(cluster.nodes.filter((node) => !node.running()).map((node) => restartNode(node)));
      await ensemble.waitForQuorum();
    },
    waitForQuorum: (timeoutMs = 20_000) => waitForQuorum(cluster, timeoutMs),
    stop: () => cluster.stop(),
  };
  return ensemble;
}

export async function waitForQuorum(cluster: ZooKeeperCluster, timeoutMs = 20_000): Promise<ZooKeeperNode> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const running = cluster.nodes.filter((node) => node.running());
    const modes = await Promise.all(running.map(async (node) => ({ node, mode: modeOf(await fourLetterWord(node.clientPort, 'srvr')) })));
    const leaders = modes.filter((m) => m.mode === 'leader' || m.mode === 'standalone');
    const serving = modes.filter((m) => m.mode !== null);
    if (leaders.length === 1 && serving.length === running.length && leaders[0] !== undefined) return leaders[0].node;
    if (Date.now() > deadline) throw new Error(`no ZooKeeper quorum within ${timeoutMs} ms: ${modes.map((m) => `${m.node.id}=${m.mode ?? 'down'}`).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function modeOf(srvr: string): string | null {
  return /Mode: (\w+)/.exec(srvr)?.[1] ?? null;
}

/**
 * Right after a server restart a new handle's connect request is sometimes left unanswered (seen
 * with ZooKeeper 3.8 and the C client): a fresh handle succeeds, so try a few short ones.
 */
async function connectWithRetry(connectString: string, attempts = 4): Promise<RawZkConnection> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await connectRawClient(connectString, 4_000, 3_000);
    } catch (error) {
      if (attempt >= attempts) throw error;
    }
  }
}

export interface ZnodeTree {
  /** Every path under the root (the root excluded), parents before children. */
  readonly paths: readonly string[];
  /** Queue entries and privateLock nodes: what a live or dead lock holder leaves. */
  readonly lockNodes: readonly string[];
}

/** Lists everything under `root` with a fresh session of its own (empty when the root is gone). */
export async function listZnodes(connectString: string, root: string): Promise<ZnodeTree> {
  const connection = await connectWithRetry(connectString);
  try {
    const paths: string[] = [];
    const walk = async (path: string): Promise<void> => {
      let children: string[];
      try {
        children = await connection.client.getChildren(path);
      } catch (error) {
        if (isZkCode(error, 'NONODE')) return;
        throw error;
      }
      for (const child of children) {
        const childPath = `${path}/${child}`;
        paths.push(childPath);
        await walk(childPath);
      }
    };
    await walk(root);
    const lockNodes = paths.filter((path) => /\/(privateLock|[^/]+-(\d{10}|-\d{9,10}))$/.test(path));
    return { paths, lockNodes };
  } finally {
    await connection.close();
  }
}
