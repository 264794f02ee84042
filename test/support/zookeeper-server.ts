import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/**
 * Real ZooKeeper servers from Debian's `zookeeper` package, started on loopback ports in a
 * temp dir. Standalone for most suites; `startEnsemble(3)` for the failover tests.
 */
export const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
export const INSTALL_HINT =
  'ZooKeeper is needed for the tests: install it with `apt-get install -y zookeeper` ' +
  `(expects ${ZOOKEEPER_JAR} and java on PATH), or set ZOOKEEPER_CONNECT=host:port to use a running server.`;

export interface ZooKeeperNode {
  readonly id: number;
  readonly clientPort: number;
  readonly dataDir: string;
  /** The server's JVM process id while it runs (the benchmarks read its CPU from /proc). */
  pid(): number | undefined;
  running(): boolean;
  stop(signal?: NodeJS.Signals): Promise<void>;
  start(): Promise<void>;
}

export interface ZooKeeperCluster {
  /** Connect string for clients: `127.0.0.1:p1,127.0.0.1:p2,...`. */
  readonly connectString: string;
  readonly nodes: readonly ZooKeeperNode[];
  /** The node whose `srvr` reports `Mode: leader` (or the standalone node). */
  leader(): Promise<ZooKeeperNode | undefined>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** ZooKeeper's tick; session timeouts are bounded to [2, 20] ticks. */
  readonly tickTimeMs?: number;
  /** Extra JVM system properties (e.g. `znode.container.checkIntervalMs`). */
  readonly systemProperties?: Readonly<Record<string, string>>;
  /** Ignored for ensembles; lets a test bind the client port it chose. */
  readonly clientPort?: number;
  /**
   * `test` (default): a small heap, serial GC and the C1 JIT only — starts fast, which is what a
   * suite that starts many servers needs. `production`: the JVM's own defaults (C2 JIT, G1, 1 GB
   * heap as zkServer.sh sets it), what a deployed ZooKeeper runs with; the benchmarks use it.
   */
  readonly jvm?: 'test' | 'production';
}

const JVM_FLAGS = {
  test: ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'],
  production: ['-Xmx1000m'],
} as const;

export function zookeeperInstalled(): boolean {
  return existsSync(ZOOKEEPER_JAR);
}

/** Sends a four-letter-word command and returns the reply ('' when the node is down). */
export async function fourLetterWord(port: number, command: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(2_000);
    socket.on('connect', () => socket.write(command));
    socket.on('data', (chunk) => (reply += chunk.toString('utf8')));
    socket.on('end', () => resolve(reply));
    socket.on('timeout', () => socket.destroy());
    socket.on('error', () => resolve(''));
    socket.on('close', () => resolve(reply));
  });
}

/**
 * The server's last committed zxid (from `srvr`): its low 32 bits count the transactions of the
 * current epoch, so the difference between two readings is the number of transactions between.
 */
export async function lastZxid(port: number): Promise<bigint> {
  const match = /Zxid: (0x[0-9a-f]+)/i.exec(await fourLetterWord(port, 'srvr'));
  if (match?.[1] === undefined) throw new Error(`no Zxid in the srvr answer of port ${port}`);
  return BigInt(match[1]);
}

async function waitUntilServing(port: number, child: ChildProcess, logs: () => string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`ZooKeeper exited with ${child.exitCode}:\n${logs()}`);
    const reply = await fourLetterWord(port, 'srvr');
    if (/Mode: (standalone|leader|follower)/.test(reply)) return;
    if (Date.now() > deadline) throw new Error(`ZooKeeper on port ${port} not serving after ${timeoutMs} ms:\n${logs()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface NodePlan {
  id: number;
  clientPort: number;
  quorumPort: number;
  electionPort: number;
  dir: string;
}

function configFor(plan: NodePlan, peers: readonly NodePlan[], tickTimeMs: number): string {
  const lines = [
    `tickTime=${tickTimeMs}`,
    'initLimit=20',
    'syncLimit=5',
    `dataDir=${join(plan.dir, 'data')}`,
    `clientPort=${plan.clientPort}`,
    'clientPortAddress=127.0.0.1',
    'admin.enableServer=false',
    '4lw.commands.whitelist=*',
    'maxClientCnxns=0',
  ];
  if (peers.length > 1) {
    for (const peer of peers) lines.push(`server.${peer.id}=127.0.0.1:${peer.quorumPort}:${peer.electionPort}`);
  }
  return lines.join('\n') + '\n';
}

function javaArgs(configFile: string, logDir: string, systemProperties: Readonly<Record<string, string>>, jvm: 'test' | 'production'): string[] {
  const props = {
    'zookeeper.log.dir': logDir,
    'zookeeper.root.logger': 'WARN,CONSOLE',
    'zookeeper.jmx.log4j.disable': 'true',
    ...systemProperties,
  };
  return [
    ...JVM_FLAGS[jvm],
    ...Object.entries(props).map(([k, v]) => `-D${k}=${v}`),
    '-cp',
    ZOOKEEPER_JAR,
    'org.apache.zookeeper.server.quorum.QuorumPeerMain',
    configFile,
  ];
}

function makeNode(plan: NodePlan, systemProperties: Readonly<Record<string, string>>, jvm: 'test' | 'production'): ZooKeeperNode {
  let child: ChildProcess | undefined;
  let output = '';
  const configFile = join(plan.dir, 'zoo.cfg');
  const node: ZooKeeperNode = {
    id: plan.id,
    clientPort: plan.clientPort,
    dataDir: join(plan.dir, 'data'),
    pid: () => (node.running() ? child?.pid : undefined),
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    async start() {
      if (node.running()) return;
      output = '';
      child = spawn('java', javaArgs(configFile, plan.dir, systemProperties, jvm), { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-8_000)));
      child.stderr?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-8_000)));
    },
    async stop(signal: NodeJS.Signals = 'SIGKILL') {
      const running = child;
      if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill(signal);
      });
    },
  };
  (node as ZooKeeperNode & { waitServing: () => Promise<void> }).waitServing = () =>
    child === undefined ? Promise.reject(new Error('not started')) : waitUntilServing(plan.clientPort, child, () => output);
  return node;
}

async function waitServing(node: ZooKeeperNode): Promise<void> {
  await (node as ZooKeeperNode & { waitServing: () => Promise<void> }).waitServing();
}

/** Starts `size` ZooKeeper servers (1 = standalone) and waits until they all serve. */
export async function startZooKeeper(size = 1, options: StartOptions = {}): Promise<ZooKeeperCluster> {
  if (!zookeeperInstalled()) throw new Error(INSTALL_HINT);
  const root = await mkdtemp(join(tmpdir(), 'es-lock-proxy-zk-'));
  const plans: NodePlan[] = [];
  for (let id = 1; id <= size; id++) {
    plans.push({
      id,
      clientPort: size === 1 && options.clientPort !== undefined ? options.clientPort : await freePort(),
      quorumPort: await freePort(),
      electionPort: await freePort(),
      dir: join(root, `node${id}`),
    });
  }
  const systemProperties = {
    'znode.container.checkIntervalMs': '1000',
    'znode.container.maxNeverUsedIntervalMs': '5000',
    ...(options.systemProperties ?? {}),
  };
  for (const plan of plans) {
    await mkdir(join(plan.dir, 'data'), { recursive: true });
    await writeFile(join(plan.dir, 'zoo.cfg'), configFor(plan, plans, options.tickTimeMs ?? 500));
    if (size > 1) await writeFile(join(plan.dir, 'data', 'myid'), `${plan.id}\n`);
  }
  const nodes = plans.map((plan) => makeNode(plan, systemProperties, options.jvm ?? 'test'));
  await Promise.all(nodes.map((n) => n.start()));
  try {
    await Promise.all(nodes.map(waitServing));
  } catch (error) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw error;
  }
  return {
    connectString: plans.map((p) => `127.0.0.1:${p.clientPort}`).join(','),
    nodes,
    async leader() {
      for (const node of nodes) {
        const reply = await fourLetterWord(node.clientPort, 'srvr');
        if (/Mode: (leader|standalone)/.test(reply)) return node;
      }
      return undefined;
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Starts a stopped node again and waits until it serves. */
export async function restartNode(node: ZooKeeperNode): Promise<void> {
  await node.start();
  await waitServing(node);
}
