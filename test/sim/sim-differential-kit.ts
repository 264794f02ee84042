import type { NodeMode, WatchEventType } from '../../src/zookeeper-client/zk-client.js';
import { ZkError } from '../../src/zookeeper-client/zk-errors.js';
import { newStats } from '../../src/lock/lock-stats.js';
import type { LockZk, NodeStat, ZkOp } from '../../src/lock/zookeeper/session/lock-zk.js';
import { type OpenedHandle, addonHandles } from '../../src/lock/zookeeper/session/session-handle.js';
import { SimClient, type SimNet } from './sim-client.js';
import { SimRandom } from './sim-random.js';
import { SimZooKeeper } from './sim-zookeeper.js';
import { VirtualClock, drainPromiseJobs } from './virtual-clock.js';

/**
 * What the differential tests share (sim-differential.test.ts without faults,
 * sim-differential-faults.test.ts with them): the two sides, the calls, and the answers in a
 * form both sides can be compared in.
 */

/** One side of the comparison: its sessions and a way to wait for an answer. */
export interface Side {
  readonly zks: readonly LockZk[];
  /** Settles `call` (the simulation runs its clock until it does). */
  settle<T>(call: Promise<T>): Promise<T>;
  /** Per session: watch events and barrier marks, in the order the session saw them. */
  readonly seen: string[][];
}

export interface SimulatedSide extends Side {
  readonly server: SimZooKeeper;
  readonly clients: readonly SimClient[];
  readonly clock: VirtualClock;
  /** Fires the clock's events until `done()` holds (or nothing is left to fire). */
  until(done: () => boolean): Promise<void>;
}

/**
 * `count` sessions on a fresh simulated ZooKeeper, connected, network delays of 0–5 ms drawn from
 * `seed`; `throttled` decides, transaction by transaction, whether the server refuses it as a whole.
 */
export function simulatedSide(seed: number, count: number, sessionTimeoutMs: number, throttled: () => boolean = () => false): SimulatedSide {
  const clock = new VirtualClock(1_800_000_000_000);
  const random = new SimRandom(seed);
  const server = new SimZooKeeper(() => clock.now());
  const net: SimNet = { server, clock, random, latency: () => random.int(0, 5), throttled, trace: () => undefined };
  const clients = Array.from({ length: count }, (_, i) => new SimClient(net, sessionTimeoutMs, `s${i}`));
  for (const client of clients) client.connect();
  while (clients.some((client) => !client.connected)) clock.fireNext();
  const until = async (done: () => boolean): Promise<void> => {
    await drainPromiseJobs();
    while (!done() && clock.fireNext()) await drainPromiseJobs();
  };
  return {
    zks: clients,
    server,
    clients,
    clock,
    seen: clients.map(() => []),
    until,
    async settle<T>(call: Promise<T>): Promise<T> {
      let done = false;
      const watched = call.finally(() => (done = true));
      watched.catch(() => undefined);
      await until(() => done);
      return watched;
    },
  };
}

/** Real sessions on the addon, each connected (`servers[i]`: session i's connect string). */
export async function openRealSessions(servers: readonly string[], sessionTimeoutMs: readonly number[]): Promise<OpenedHandle[]> {
  const handles = addonHandles(newStats(), false, 8_192);
  const opened: OpenedHandle[] = [];
  for (const [i, connectString] of servers.entries()) {
    const handle = handles.open({ servers: connectString, sessionTimeoutMs: sessionTimeoutMs[i]! });
    await new Promise<void>((resolve) => {
      handle.handle.on('connect', () => resolve());
      handle.handle.connect();
    });
    opened.push(handle);
  }
  return opened;
}

export type Step =
  | { readonly kind: 'create'; readonly session: number; readonly path: string; readonly mode: NodeMode }
  | { readonly kind: 'delete'; readonly session: number; readonly path: string; readonly version: number }
  | { readonly kind: 'get' | 'getWatched' | 'existsWatched' | 'children' | 'childrenWatched'; readonly session: number; readonly path: string }
  | { readonly kind: 'multi'; readonly session: number; readonly ops: readonly ZkOp[] }
  | { readonly kind: 'ephemerals'; readonly session: number; readonly prefix: string; readonly root: string };

export const MODES: readonly NodeMode[] = ['persistent', 'ephemeral', 'persistentSequential', 'ephemeralSequential', 'container'];

/** Answers in comparable form: zxids as tokens ordered later, owners as session numbers. */
export class Normalizer {
  readonly zxids = new Set<number>();
  constructor(private readonly sessionIds: readonly string[]) {}

  stat(stat: NodeStat | undefined): Record<string, unknown> | undefined {
    if (stat === undefined) return undefined;
    this.zxids.add(stat.czxid);
    this.zxids.add(stat.mzxid);
    const owner = stat.ephemeralOwner === '0' ? '0' : `s${this.sessionIds.indexOf(stat.ephemeralOwner)}`;
    return { czxid: `<zxid ${stat.czxid}>`, mzxid: `<zxid ${stat.mzxid}>`, version: stat.version, owner };
  }

  /** Replaces each zxid token by its rank among the zxids seen. */
  ranks(text: string): string {
    const order = [...this.zxids].sort((a, b) => a - b);
    return text.replace(/<zxid (\d+)>/g, (_, zxid: string) => `zxid#${order.indexOf(Number(zxid))}`);
  }
}

/** Makes `step`'s call on `side` and returns its answer in comparable form (a ZooKeeper error as its code). */
export async function perform(side: Side, step: Step, norm: Normalizer, watchCounter: { n: number }): Promise<unknown> {
  const zk = side.zks[step.session]!;
  const watch = (session: number): ((type: WatchEventType) => void) => {
    const id = ++watchCounter.n;
    return (type) => side.seen[session]!.push(`watch#${id} ${type}`);
  };
  try {
    switch (step.kind) {
      case 'create': {
        const created = await side.settle(zk.create(step.path, 'x', step.mode));
        return { path: created.path, stat: norm.stat(created.stat) };
      }
      case 'delete':
        await side.settle(zk.delete(step.path, step.version));
        return 'deleted';
      case 'get': {
        const node = await side.settle(zk.get(step.path));
        return { data: node.data.toString('utf8'), stat: norm.stat(node.stat) };
      }
      case 'getWatched': {
        const node = await side.settle(zk.getWatched(step.path, watch(step.session)));
        return { data: node.data.toString('utf8'), stat: norm.stat(node.stat) };
      }
      case 'existsWatched':
        return { stat: norm.stat((await side.settle(zk.existsWatched(step.path, watch(step.session)))) ?? undefined) ?? null };
      case 'children': {
        const read = await side.settle(zk.children(step.path));
        return { children: [...read.children].sort(), stat: norm.stat(read.stat) };
      }
      case 'childrenWatched':
        return { children: [...(await side.settle(zk.childrenWatched(step.path, watch(step.session))))].sort() };
      case 'ephemerals': {
        const paths = await side.settle(zk.ephemerals(step.prefix));
        return { ephemerals: paths.filter((path) => path.startsWith(`${step.root}/`)).sort() };
      }
      case 'multi': {
        const outcome = await side.settle(zk.multi(step.ops));
        if (!outcome.ok) return outcome;
        return { ok: true, results: outcome.results.map((result) => ({ path: result.path, stat: norm.stat(result.stat) })) };
      }
    }
  } catch (error) {
    if (error instanceof ZkError) return { error: error.code };
    throw error;
  }
}

/**
 * The callbacks of one notification (several watches left on one node, one event) run in an
 * order ZooKeeper leaves open (the C client's is newest first): runs of one event type are
 * compared as sets; the order between different events stays.
 */
export function inNotificationOrder(seen: readonly string[]): string[] {
  const out: string[] = [];
  let run: string[] = [];
  const flush = (): void => {
    out.push(...run.sort());
    run = [];
  };
  for (const entry of seen) {
    const type = entry.startsWith('watch#') ? entry.slice(entry.indexOf(' ') + 1) : null;
    const runType = run[0]?.slice(run[0].indexOf(' ') + 1);
    if (type === null || type !== runType) flush();
    if (type === null) out.push(entry);
    else run.push(entry);
  }
  flush();
  return out;
}

/** After a step each listed session reads `root`: the watch events of the step reach it before that answer. */
export async function barrier(side: Side, root: string, step: number | string, sessions: readonly number[] = side.zks.map((_, i) => i)): Promise<void> {
  for (const session of sessions) {
    await side.settle(side.zks[session]!.get(root));
    side.seen[session]!.push(`after step ${step}`);
  }
}
