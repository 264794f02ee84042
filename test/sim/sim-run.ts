import pino from 'pino';
import type { ZooKeeperSettings } from '../../src/config/settings.js';
import type { LockKey } from '../../src/lock/lock-engine.js';
import { PRIVATE_LOCK, documentPath, privateLockPath } from '../../src/lock/zookeeper/znode-names.js';
import { keyString } from '../../src/lock/lock-key.js';
import { lockEvents } from '../../src/lock/lock-events.js';
import type { ZkHandles } from '../../src/lock/zookeeper/session/session-handle.js';
import { ZooKeeperLockEngine } from '../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { RequestGate } from '../../src/lock/zookeeper/session/request-gate.js';
import { SimClient, type SimNet } from './sim-client.js';
import { GatedSimZk } from './sim-gate.js';
import { Actors, type Original, Work } from './sim-actors.js';
import { planFaults, planReaper } from './sim-faults.js';
import { Ledger, type ServerView } from './sim-ledger.js';
import { OriginalClient } from './sim-original-client.js';
import { SimRandom } from './sim-random.js';
import { SimZooKeeper } from './sim-zookeeper.js';
import { planOperator } from './sim-operator.js';
import { planHandedOn } from './sim-handed-on.js';
import { LinkLag, planLateGrant } from './sim-late-grant.js';
import { Watchdog } from './sim-watchdog.js';
import { VirtualClock, drainPromiseJobs } from './virtual-clock.js';
import { ACTIVE_MS, type EngineSlot, INDEX, QUIET_MS, ROOT, RUN_LIMIT_MS, SESSION_TIMEOUT_MS, SETTLE_BOUND_MS, PROBE_TIMEOUT_MS, START_MS } from './sim-world.js';

export interface RunOptions {
  readonly seed: number;
  /** Keeps a trace of every simulated event (for replaying a failing seed). */
  readonly trace?: boolean;
  /**
   * Errors capture their stack traces. Off by default: nothing in a run reads a stack, and capturing
   * one for each of the many errors a run makes (ZooKeeper's answers, timeouts, cancellations) is a
   * large share of its cost. A run that throws is run again with them, so its error comes with its stack.
   */
  readonly stackTraces?: boolean;
  /**
   * The request gate's bound instead of the seed's draw (0: no gate): a regression keeps the set-up
   * its seed had when it was found.
   */
  readonly gate?: number;
}

export interface RunResult {
  readonly seed: number;
  readonly violations: readonly string[];
  readonly events: number;
  readonly virtualMs: number;
  readonly trace: readonly string[];
  readonly summary: string;
}

/** The document of the late grants (sim-late-grant.ts), apart from the actors' keys. */
const LATE_KEY: LockKey = { index: INDEX, id: 'late' };
/** The documents of the handed-on bulk keys (sim-handed-on.ts), apart from the actors' keys. */
const HANDED_ON_KEYS: readonly [LockKey, LockKey] = [
  { index: INDEX, id: 'handed-0' },
  { index: INDEX, id: 'handed-1' },
];

/**
 * One seeded run: two to four engines on one simulated ZooKeeper, actors taking single and bulk
 * locks, faults (cut links, expiries, lost replies, container reaping, forced releases), and the
 * ledger checking the invariants after every event and at the end.
 */
export async function simulate(options: RunOptions): Promise<RunResult> {
  if (options.stackTraces === true) return run(options);
  try {
    return await run(options);
  } catch (error) {
    // The same run, event for event, throws again: now with the stack of where.
    await run({ ...options, stackTraces: true });
    throw error;
  }
}

async function run(options: RunOptions): Promise<RunResult> {
  const random = new SimRandom(options.seed);
  const netRandom = random.fork();
  const faultRandom = random.fork();
  const actorRandom = random.fork();
  const clock = new VirtualClock(START_MS);
  const trace: string[] = [];
  const tracing = options.trace === true;
  const log = (line: string): void => {
    if (tracing) trace.push(`${String(clock.now() - START_MS).padStart(6)} ${line}`);
  };
  // The added faults draw from streams of their own, so that a seed's other draws stay what they were before them.
  const wrapRandom = new SimRandom(options.seed ^ 0x2031_5e9a);
  const operatorRandom = new SimRandom(options.seed ^ 0x0be7_a70d);
  const steerRandom = new SimRandom(options.seed ^ 0x57ee_12ed);
  // Steered runs (4 in 10): bursts on hot documents and, on a share of the hops, a slow network —
  // where the rare paths are (a grant's create answered after its request gave up, fresh reads of the queue).
  const steered = steerRandom.chance(0.4);
  // Steered runs: one to three late grants (sim-late-grant.ts), each with a stall on one engine's link.
  const lateRandom = new SimRandom(options.seed ^ 0x1a7e_6a47);
  const lateGrants = steered ? lateRandom.int(1, 3) : 0;
  // Steered runs, half of them: a bulk's key handed on and then deleted by hand (sim-handed-on.ts).
  const handedOnRandom = new SimRandom(options.seed ^ 0x0a4d_0e0f);
  const handedOn = steered && handedOnRandom.chance(0.5);
  // Sequence counters near 2^31 in a share of runs: the queue's names wrap to negative within a few entries.
  const sequenceStart = wrapRandom.chance(0.3) ? 2 ** 31 - wrapRandom.int(0, 8) : 0;
  const server = new SimZooKeeper(() => clock.now(), { sequenceStart });
  const slowNet = netRandom.chance(0.3);
  // Its own stream, so that a seed's other draws stay what they were before throttling was simulated.
  const throttleRandom = new SimRandom(options.seed ^ 0x7407_7133);
  const throttleChance = throttleRandom.chance(0.3) ? throttleRandom.pick([0.01, 0.05, 0.2]) : 0;
  // A share of runs sends every engine's requests through a narrow request gate (production's bound
  // is thousands of operations): requests wait there, in order, and a bulk's transaction counts as the bound.
  const gateRandom = new SimRandom(options.seed ^ 0x6a7e_0b0d);
  const drawnGate = gateRandom.chance(0.3) ? gateRandom.pick([1, 2, 4, 8]) : 0;
  const gateCapacity = options.gate ?? drawnGate;
  const lag = new LinkLag(lateRandom.fork(), () => clock.now());
  const net: SimNet = {
    server,
    clock,
    random: netRandom,
    latency: (client) =>
      (slowNet && netRandom.chance(0.1) ? netRandom.int(5, 60) : netRandom.int(0, 3)) + (steered && steerRandom.chance(0.15) ? steerRandom.int(10, 60) : 0) + lag.extra(client),
    trace: log,
    foreignLockDeleted: (info) => ledger.foreignLockDeleted(info.path, info.czxid, info.by, info.heardZxid),
    // Rare whole-request refusals of transactions while the actors work; none once the faults are over.
    throttled: () => clock.now() - START_MS < ACTIVE_MS && throttleRandom.chance(throttleChance),
  };
  const engineCount = random.int(2, 4);
  const keys: LockKey[] = Array.from({ length: random.int(1, 4) }, (_, i) => ({ index: INDEX, id: `d${i}` }));
  const settings = engineSettings(random);
  // The checks ask for a document's path after every event: each key's path is worked out once.
  const docPaths = new Map<string, string>();
  const docOf = (key: string): string => {
    let path = docPaths.get(key);
    if (path === undefined) {
      const [index = '', id = ''] = key.split('/');
      path = documentPath(ROOT, { index, id });
      docPaths.set(key, path);
    }
    return path;
  };
  // …and the paths of its children: one string each, not a new one per check.
  const childPaths = new Map<string, Map<string, string>>();
  const childPath = (parent: string, name: string): string => {
    let names = childPaths.get(parent);
    if (names === undefined) childPaths.set(parent, (names = new Map()));
    let path = names.get(name);
    if (path === undefined) names.set(name, (path = `${parent}/${name}`));
    return path;
  };
  const view: ServerView = {
    entryHistory: (sessionId, key) =>
      server
        .entryHistory(docOf(key))
        .filter((life) => life.owner === sessionId)
        .map((life) => ({ name: life.path.slice(life.path.lastIndexOf('/') + 1), czxid: life.czxid, removedZxid: life.removedZxid })),
    privateLock: (key) => {
      const node = server.nodes.get(privateLockPath(docOf(key)));
      return node === undefined ? null : { czxid: node.czxid, owner: node.ephemeralOwner };
    },
    sessionAlive: (id) => server.sessionAlive(id),
    lastZxid: () => server.lastZxid(),
    childrenReadZxid: (sessionId, key) => server.childrenReadZxid(sessionId, docOf(key)),
    queue: (key) => {
      const node = server.nodes.get(docOf(key));
      if (node === undefined) return [];
      return [...node.children]
        .filter((name) => name !== PRIVATE_LOCK)
        .map((name) => {
          const child = server.nodes.get(childPath(node.path, name));
          return { name, czxid: child?.czxid ?? 0, owner: child?.ephemeralOwner ?? '0', ctime: (child?.ctime ?? START_MS) - START_MS };
        });
    },
  };
  // The hand-over bound, plus one grant per engine already on its way when the foreground entry appears.
  const ledger = new Ledger(() => clock.now() - START_MS, SETTLE_BOUND_MS, view, settings.handOverMaxCount + engineCount, engineCount, {
    maxCount: settings.handOverMaxCount,
    maxMs: settings.handOverMaxMs,
  });
  const operator = operatorRandom.chance(0.35);
  const summary =
    `engines=${engineCount} keys=${keys.length} linger=${settings.lingerMs} cleanup=${settings.documentCleanup} handOver=${settings.handOverMaxCount}/${settings.handOverMaxMs}ms slowNet=${slowNet} throttle=${throttleChance}` +
    `${sequenceStart === 0 ? '' : ` sequenceStart=${sequenceStart}`}${gateCapacity === 0 ? '' : ` gate=${gateCapacity}`}`;
  log(`run ${options.seed}: ${summary}`);
  server.observe((ops, removed) => {
    if (!ops.some((op) => op.type === 'setData' && op.path.endsWith('/.forced-releases'))) return;
    for (const [path, node] of removed) {
      if (path.endsWith(`/${PRIVATE_LOCK}`)) ledger.forced(path, node.czxid);
      // The holder's queue entry goes with a forced release: an operator deleted it, as by hand.
      else ledger.entryDeletedByOperator(path, node.owner);
    }
  });

  const result = (): RunResult => ({ seed: options.seed, violations: ledger.violations, events, virtualMs: clock.now() - START_MS, trace, summary });
  const stackTraceLimit = Error.stackTraceLimit;
  if (options.stackTraces !== true) Error.stackTraceLimit = 0;
  const uninstall = clock.install();
  let events = 0;
  try {
    const slots: EngineSlot[] = [];
    const gates: GatedSimZk[] = [];
    for (let index = 0; index < engineCount; index++) {
      const clients: SimClient[] = [];
      const handles: ZkHandles = {
        open: () => {
          const client = new SimClient(net, SESSION_TIMEOUT_MS, `e${index}`);
          clients.push(client);
          if (gateCapacity === 0) return { handle: client, zk: client };
          const gated = new GatedSimZk(client, new RequestGate(gateCapacity), (what) => ledger.violate(what));
          gates.push(gated);
          return { handle: client, zk: gated };
        },
      };
      const events = lockEvents({
        lost: (lost) => log(`e${index} marks ${keyString(lost.key)} lost: ${lost.reason}`),
        sessionExpired: () => log(`e${index} sees its session expire`),
      });
      const engine = new ZooKeeperLockEngine({ ...settings }, quietLogger, { handles, events });
      ledger.engineState(index, false);
      engine.onStateChange((state) => {
        log(`e${index} state ${state}`);
        ledger.engineState(index, state === 'connected');
      });
      slots.push({ index, engine, clients });
    }
    const work = new Work();
    // Some runs share the documents with a client of the original algorithm (its own session, a link that never fails).
    let original: Original | null = null;
    if (random.chance(0.3)) {
      const client = new SimClient(net, SESSION_TIMEOUT_MS, 'orig');
      const ready = new Promise<void>((resolve) => client.on('connect', () => resolve()));
      client.connect();
      original = { index: engineCount, client: new OriginalClient(client, () => client.alive), sessionId: () => client.sessionId, ready };
    }
    const actors = new Actors(slots, keys, ledger, actorRandom, work, log, original);
    // The late grants' document is theirs alone: nothing else holds it for seconds meanwhile.
    const late = new Actors(slots, [LATE_KEY], ledger, lateRandom, work, log, null);
    actors.plan(ACTIVE_MS);
    // Steered runs: bursts on hot documents, where hand-overs, the bound and fresh reads of the queue are decided.
    if (steered) {
      const hot = new Actors(slots, keys, ledger, steerRandom, work, log, null);
      const bursts = steerRandom.int(1, 4);
      log(`${bursts} bursts on hot documents`);
      for (let i = 0; i < bursts; i++) hot.burst(ACTIVE_MS);
    }
    if (lateGrants > 0) log(`${lateGrants} late grants on ${keyString(LATE_KEY)}`);
    for (let i = 0; i < lateGrants; i++) planLateGrant(late, slots, LATE_KEY, lateRandom, lag, ACTIVE_MS);
    const handed = new Actors(slots, HANDED_ON_KEYS, ledger, handedOnRandom, work, log, null);
    if (handedOn) {
      log(`a bulk's key handed on and deleted by hand on ${HANDED_ON_KEYS.map((key) => keyString(key)).join(',')}`);
      planHandedOn(handed, slots, HANDED_ON_KEYS, server, ledger, handedOnRandom, ACTIVE_MS, log);
    }
    if (operator && original === null) {
      log('an operator steps in');
      planOperator(slots, keys, server, ledger, operatorRandom, clock, ACTIVE_MS, log);
    }
    const watchdog = new Watchdog(ledger, {
      slots,
      keys: [...keys, ...(lateGrants > 0 ? [LATE_KEY] : []), ...(handedOn ? HANDED_ON_KEYS : [])].map((key) => keyString(key)),
      lingerMs: settings.lingerMs,
      startMs: START_MS,
      fastNetwork: !slowNet && !steered,
      now: () => clock.now() - START_MS,
      asked: (index) => ledger.asked.get(index) ?? 0,
      cuts: (index) => slots[index]?.clients.reduce((sum, client) => sum + client.cuts, 0) ?? 0,
      gateWaitedAt: () => gates.reduce((latest, gate) => Math.max(latest, gate.waitedAt(clock.now()) - START_MS), Number.NEGATIVE_INFINITY),
      nodesOf: (sessionId, key) => {
        const node = server.nodes.get(docOf(key));
        const names: string[] = [];
        if (node === undefined) return names;
        for (const name of node.children) if (server.nodes.get(childPath(node.path, name))?.ephemeralOwner === sessionId) names.push(name);
        return names;
      },
    });
    const lastFaultEnd = planFaults(slots, faultRandom, clock, log, steered);
    planReaper(server, faultRandom, clock, log, ACTIVE_MS + QUIET_MS);
    // A run ends at its first violation: the report names only the first, and a broken engine
    // (a mutant, a deliberate break) that spins would otherwise spin until the run limit.
    const step = async (): Promise<boolean> => {
      if (!clock.fireNext(START_MS + RUN_LIMIT_MS)) return false;
      events++;
      await drainPromiseJobs();
      ledger.checkStep();
      watchdog.check();
      return ledger.violations.length === 0;
    };
    const quietAt = START_MS + Math.max(ACTIVE_MS, lastFaultEnd) + QUIET_MS;
    while ((clock.now() < quietAt || work.busy > 0) && (await step()));
    if (ledger.violations.length > 0) return result();
    if (work.busy > 0) ledger.violate(`stuck: ${work.busy} actor operations still open at the run limit`);
    ledger.checkSettled();
    // Faults over: every document is free, so one request per document must be granted.
    actors.probe(PROBE_TIMEOUT_MS);
    if (lateGrants > 0) late.probe(PROBE_TIMEOUT_MS);
    if (handedOn) handed.probe(PROBE_TIMEOUT_MS);
    // The probes' first promise jobs run now, at this instant, not after the next event.
    await drainPromiseJobs();
    while (work.busy > 0 && (await step()));
    if (ledger.violations.length > 0) return result();
    if (work.busy > 0) ledger.violate(`liveness: ${work.busy} probe acquisitions never settled`);
    const lingerEnd = clock.now() + settings.lingerMs + 500;
    while (clock.now() < lingerEnd && (await step()));
    checkQuiescence(slots, server, ledger);
    let closed = false;
    void Promise.all(slots.map((slot) => slot.engine.close())).then(() => (closed = true));
    await drainPromiseJobs();
    while (!closed && (await step()));
  } finally {
    uninstall();
    Error.stackTraceLimit = stackTraceLimit;
  }
  return result();
}

const quietLogger = pino({ level: 'silent' });

function engineSettings(random: SimRandom): ZooKeeperSettings {
  return {
    servers: 'simulated:2181',
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    connectionRetry: 3,
    connectionDelayMs: 200,
    foregroundPrefix: 'A',
    backgroundPrefix: 'B',
    lockRoot: ROOT,
    auth: null,
    handOverMaxCount: random.pick([1, 2, 16]),
    handOverMaxMs: random.pick([20, 100]),
    lingerMs: random.pick([0, 0, 30, 300]),
    documentCleanup: random.pick(['release', 'reaper'] as const),
  };
}

/** Nothing left behind: no engine holds or waits, no live session keeps a lock node. */
function checkQuiescence(slots: readonly EngineSlot[], server: SimZooKeeper, ledger: Ledger): void {
  if (ledger.activeGrants() > 0) ledger.violate(`quiescence: ${ledger.activeGrants()} grants still held by actors`);
  for (const slot of slots) {
    const { held, waiting } = slot.engine.activity();
    if (held > 0 || waiting > 0) ledger.violate(`quiescence: engine ${slot.index} still has ${held} held and ${waiting} waiting`);
  }
  for (const node of server.ephemeralsUnder(ROOT)) {
    if (server.sessionAlive(node.owner)) ledger.violate(`quiescence: ${node.path} of live session ${node.owner} left behind`);
  }
}
