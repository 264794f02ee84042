import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockZk, ZkOp } from '../../src/lock/zookeeper/session/lock-zk.js';
import type { OpenedHandle } from '../../src/lock/zookeeper/session/session-handle.js';
import { type ZooKeeperCluster, startZooKeeper } from '../support/zookeeper-server.js';
import { MODES, Normalizer, type Side, type Step, barrier, inNotificationOrder, openRealSessions, perform, simulatedSide } from './sim-differential-kit.js';
import { SimRandom } from './sim-random.js';

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
  const opened = await openRealSessions(Array.from({ length: SESSIONS }, () => zk.connectString), Array.from({ length: SESSIONS }, () => SESSION_TIMEOUT_MS));
  real = { handles: opened, zks: opened.map((handle) => handle.zk) };
}, 60_000);

afterAll(async () => {
  await Promise.all((real?.handles ?? []).map((handle) => handle.handle.close()));
  await zk?.stop();
});

function realSide(): Side {
  return { zks: real.zks, seen: real.zks.map(() => []), settle: (call) => call };
}

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

describe('simulated ZooKeeper against the real server', () => {
  it(`answers ${SEQUENCES} generated sequences of ${STEPS} calls as the real one does`, { timeout: 120_000 }, async () => {
    let watchEvents = 0;
    let sequentialNames = 0;
    let ephemeralLists = 0;
    for (let sequence = 1; sequence <= SEQUENCES; sequence++) {
      const root = `/diff-${sequence}-${Date.now().toString(36)}`;
      const simulated = simulatedSide(sequence, SESSIONS, SESSION_TIMEOUT_MS);
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
