import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeMode, WatchEventType } from '../../src/zookeeper-client/zk-client.js';
import { ZkError } from '../../src/zookeeper-client/zk-errors.js';
import { newStats } from '../../src/lock/lock-stats.js';
import type { LockZk, NodeStat, ZkOp } from '../../src/lock/zookeeper/session/lock-zk.js';
import { type OpenedHandle, addonHandles } from '../../src/lock/zookeeper/session/session-handle.js';
import { type ZooKeeperCluster, startZooKeeper } from '../support/zookeeper-server.js';
import { SimClient, type SimNet } from './sim-client.js';
import { SimRandom } from './sim-random.js';
import { SimZooKeeper } from './sim-zookeeper.js';
import { VirtualClock, drainPromiseJobs } from './virtual-clock.js';

/**
 * The simulated ZooKeeper against a real one: the same seeded sequences of create, delete,
 * multi, getChildren, getData (with and without watches) and getEphemerals calls, from three sessions, no
 * faults, through the engine's own port (`LockZk`: the addon's `GatedZk` on the real side).
 * Every answer, error code, stat and watch event must match; where they differ, the simulator
 * is wrong. Zxids are compared by their order (the real server's count also has its sessions'),
 * session ids by which session owns the node, children and ephemerals as sets (ZooKeeper lists
 * them in hash order). The real sessions outlive a sequence, so an ephemerals answer is compared
 * within the sequence's root: "/" and "" list every node of the session, earlier sequences' too.
 */
const SESSIONS = 3;
const SEQUENCES = 25;
const STEPS = 60;
const SESSION_TIMEOUT_MS = 10_000;

let zk: ZooKeeperCluster;
let real: { handles: OpenedHandle[]; zks: LockZk[] };

beforeAll(async () => {
  // Its own server, the container manager out of the way: reaping is timed by the simulation, not compared here.
  zk = await startZooKeeper(1, { systemProperties: { 'znode.container.checkIntervalMs': '3600000' } });
  const handles = addonHandles(newStats(), false, 8_192);
  const opened: OpenedHandle[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const handle = handles.open({ servers: zk.connectString, sessionTimeoutMs: SESSION_TIMEOUT_MS });
    await new Promise<void>((resolve) => {
      handle.handle.on('connect', () => resolve());
      handle.handle.connect();
    });
    opened.push(handle);
  }
  real = { handles: opened, zks: opened.map((handle) => handle.zk) };
}, 60_000);

afterAll(async () => {
  await Promise.all((real?.handles ?? []).map((handle) => handle.handle.close()));
  await zk?.stop();
});

/** One side of the comparison: three sessions and a way to wait for an answer. */
interface Side {
  readonly zks: readonly LockZk[];
  /** Settles `call` (the simulation runs its clock until it does). */
  settle<T>(call: Promise<T>): Promise<T>;
  /** Per session: watch events and barrier marks, in the order the session saw them. */
  readonly seen: string[][];
}

function simulatedSide(seed: number): Side {
  const clock = new VirtualClock(1_800_000_000_000);
  const random = new SimRandom(seed);
  const server = new SimZooKeeper(() => clock.now());
  const net: SimNet = { server, clock, random, latency: () => random.int(0, 5), trace: () => undefined };
  const clients = Array.from({ length: SESSIONS }, (_, i) => new SimClient(net, SESSION_TIMEOUT_MS, `s${i}`));
  for (const client of clients) client.connect();
  while (clients.some((client) => !client.connected)) clock.fireNext();
  return {
    zks: clients,
    seen: clients.map(() => []),
    async settle<T>(call: Promise<T>): Promise<T> {
      let done = false;
      const watched = call.finally(() => (done = true));
      watched.catch(() => undefined);
      await drainPromiseJobs();
      while (!done && clock.fireNext()) await drainPromiseJobs();
      return watched;
    },
  };
}

function realSide(): Side {
  return { zks: real.zks, seen: real.zks.map(() => []), settle: (call) => call };
}

type Step =
  | { readonly kind: 'create'; readonly session: number; readonly path: string; readonly mode: NodeMode }
  | { readonly kind: 'delete'; readonly session: number; readonly path: string; readonly version: number }
  | { readonly kind: 'get' | 'getWatched' | 'existsWatched' | 'children' | 'childrenWatched'; readonly session: number; readonly path: string }
  | { readonly kind: 'multi'; readonly session: number; readonly ops: readonly ZkOp[] }
  | { readonly kind: 'ephemerals'; readonly session: number; readonly prefix: string; readonly root: string };

const MODES: readonly NodeMode[] = ['persistent', 'ephemeral', 'persistentSequential', 'ephemeralSequential', 'container'];

/** The next call, drawn from the paths the sequence has made so far (and a few that may not exist). */
function nextStep(random: SimRandom, root: string, known: readonly string[]): Step {
  const session = random.int(0, SESSIONS - 1);
  const existing = (): string => (known.length > 0 && random.chance(0.8) ? random.pick(known) : random.pick([`${root}/a`, `${root}/b`, `${root}/a/c`]));
  const parent = (): string => random.pick([root, ...known]);
  const fresh = (): string => `${parent()}/${random.pick(['a', 'b', 'c', 'q-'])}`;
  const version = (): number => random.pick([-1, -1, 0, 1, 2]);
  const op = (): ZkOp => {
    switch (random.int(0, 3)) {
      case 0:
        return { type: 'create', path: fresh(), data: `d${random.int(0, 9)}`, mode: random.pick(MODES) };
      case 1:
        return { type: 'delete', path: existing(), version: version() };
      case 2:
        return { type: 'check', path: existing(), version: version() };
      default:
        return { type: 'setData', path: existing(), data: `v${random.int(0, 9)}`, version: version() };
    }
  };
  const pick = random.float();
  if (pick < 0.3) return { kind: 'create', session, path: fresh(), mode: random.pick(MODES) };
  if (pick < 0.45) return { kind: 'delete', session, path: existing(), version: version() };
  if (pick < 0.7) return { kind: 'multi', session, ops: Array.from({ length: random.int(1, 4) }, op) };
  if (pick < 0.78) {
    // String prefixes, not subtrees: a node's path, its path cut short, one with a slash, the whole tree.
    const prefix = random.pick([`${existing()}/`, existing(), existing().slice(0, -1), `${root}/`, `${root}/q`, '/', '']);
    return { kind: 'ephemerals', session, prefix, root };
  }
  return { kind: random.pick(['get', 'getWatched', 'existsWatched', 'children', 'childrenWatched'] as const), session, path: existing() };
}

/** Answers in comparable form: zxids as tokens ordered later, owners as session numbers. */
class Normalizer {
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

async function perform(side: Side, step: Step, norm: Normalizer, watchCounter: { n: number }): Promise<unknown> {
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
function inNotificationOrder(seen: readonly string[]): string[] {
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

/** After every step each session reads the root: the watch events of the step reach it before that answer. */
async function barrier(side: Side, root: string, step: number): Promise<void> {
  for (const [session, zk] of side.zks.entries()) {
    await side.settle(zk.get(root));
    side.seen[session]!.push(`after step ${step}`);
  }
}

describe('simulated ZooKeeper against the real server', () => {
  it(`answers ${SEQUENCES} generated sequences of ${STEPS} calls as the real one does`, { timeout: 120_000 }, async () => {
    let watchEvents = 0;
    let sequentialNames = 0;
    let ephemeralLists = 0;
    for (let sequence = 1; sequence <= SEQUENCES; sequence++) {
      const root = `/diff-${sequence}-${Date.now().toString(36)}`;
      const simulated = simulatedSide(sequence);
      const server = realSide();
      const sides = [simulated, server];
      const norms = [new Normalizer(simulated.zks.map((zk) => zk.sessionId)), new Normalizer(server.zks.map((zk) => zk.sessionId))];
      const transcripts: string[][] = [[], []];
      const counters = [{ n: 0 }, { n: 0 }];
      for (const side of sides) await side.settle(side.zks[0]!.create(root, '', 'persistent'));
      const random = new SimRandom(sequence * 7_919);
      const known: string[] = [];
      for (let i = 0; i < STEPS; i++) {
        const step = nextStep(random, root, known);
        const answers: unknown[] = [];
        for (const [s, side] of sides.entries()) {
          answers.push(await perform(side, step, norms[s]!, counters[s]!));
          await barrier(side, root, i);
        }
        for (const [s, answer] of answers.entries()) transcripts[s]!.push(`${JSON.stringify(step)} -> ${JSON.stringify(answer)}`);
        const created = answers[0] as { path?: string; results?: { path?: string }[] };
        if (typeof created?.path === 'string') known.push(created.path);
        for (const result of created?.results ?? []) if (typeof result.path === 'string') known.push(result.path);
      }
      const [simText = '', realText = ''] = [0, 1].map((s) => norms[s]!.ranks([...transcripts[s]!, ...sides[s]!.seen.map((seen, i) => `session ${i}: ${inNotificationOrder(seen).join(', ')}`)].join('\n')));
      expect(simText, `sequence ${sequence} (root ${root})`).toBe(realText);
      watchEvents += (realText.match(/watch#/g) ?? []).length;
      sequentialNames += (realText.match(/-?\d{10}"/g) ?? []).length;
      ephemeralLists += (realText.match(/"ephemerals":\["/g) ?? []).length;
    }
    // The sequences exercised what they compare.
    expect(watchEvents).toBeGreaterThan(20);
    expect(sequentialNames).toBeGreaterThan(20);
    expect(ephemeralLists).toBeGreaterThan(20);
    console.log(`differential: ${SEQUENCES * STEPS} calls, ${watchEvents} watch events, ${sequentialNames} sequential names, ${ephemeralLists} non-empty ephemeral lists compared`);
  });
});
