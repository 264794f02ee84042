import pino from 'pino';
import type { ZooKeeperSettings } from '../../src/config/settings.js';
import type { HeldLock, LockKey, Priority } from '../../src/lock/lock-engine.js';
import { PRIVATE_LOCK, documentPath, keyString } from '../../src/lock/znode-names.js';
import { lockEvents } from '../../src/lock/lock-events.js';
import type { ZkHandles } from '../../src/lock/zookeeper/session-handle.js';
import { ZooKeeperLockEngine } from '../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { SimClient, type SimNet } from './sim-client.js';
import { OriginalClient } from './sim-original-client.js';
import { ClientGone, type Grant, Ledger, type ServerView, type Wait } from './sim-ledger.js';
import { SimRandom } from './sim-random.js';
import { SimZooKeeper } from './sim-zookeeper.js';
import { VirtualClock, drainPromiseJobs } from './virtual-clock.js';

const SESSION_TIMEOUT_MS = 4_000;
const ROOT = '/sim/locks';
const INDEX = 'docs';
/** Actors start work and faults strike within this window; then the system is left alone. */
const ACTIVE_MS = 3_000;
/** Quiet time after the last fault before the end checks: a session cut at the end has expired or reconnected by then. */
const QUIET_MS = 2 * SESSION_TIMEOUT_MS;
/** Longest run in virtual time; a run still busy then is stuck. */
const RUN_LIMIT_MS = 60_000;
/** An acquisition settles within its timeout plus this (the withdrawal of its queue entry may wait for a link, bounded by the session). */
const SETTLE_BOUND_MS = SESSION_TIMEOUT_MS + 1_000;
const PROBE_TIMEOUT_MS = 20_000;
const START_MS = 1_800_000_000_000;

export interface RunOptions {
  readonly seed: number;
  /** Keeps a trace of every simulated event (for replaying a failing seed). */
  readonly trace?: boolean;
}

export interface RunResult {
  readonly seed: number;
  readonly violations: readonly string[];
  readonly events: number;
  readonly virtualMs: number;
  readonly trace: readonly string[];
  readonly summary: string;
}

interface EngineSlot {
  readonly index: number;
  readonly engine: ZooKeeperLockEngine;
  readonly clients: SimClient[];
}

/**
 * One seeded run: two to four engines on one simulated ZooKeeper, actors taking single and bulk
 * locks, faults (cut links, expiries, lost replies, container reaping, forced releases), and the
 * ledger checking the invariants after every event and at the end.
 */
export async function simulate(options: RunOptions): Promise<RunResult> {
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
  const server = new SimZooKeeper(() => clock.now());
  const slowNet = netRandom.chance(0.3);
  const net: SimNet = {
    server,
    clock,
    random: netRandom,
    latency: () => (slowNet && netRandom.chance(0.1) ? netRandom.int(5, 60) : netRandom.int(0, 3)),
    trace: log,
  };
  const engineCount = random.int(2, 4);
  const keys: LockKey[] = Array.from({ length: random.int(1, 4) }, (_, i) => ({ index: INDEX, id: `d${i}` }));
  const settings = engineSettings(random);
  const view: ServerView = {
    sessionAlive: (id) => server.sessionAlive(id),
    lastZxid: () => server.lastZxid(),
    queue: (key) => {
      const [index = '', id = ''] = key.split('/');
      const node = server.nodes.get(documentPath(ROOT, { index, id }));
      if (node === undefined) return [];
      return [...node.children]
        .filter((name) => name !== PRIVATE_LOCK)
        .map((name) => {
          const child = server.nodes.get(`${node.path}/${name}`);
          return { name, czxid: child?.czxid ?? 0, owner: child?.ephemeralOwner ?? '0' };
        });
    },
  };
  // The hand-over bound, plus one grant per engine already on its way when the foreground entry appears.
  const ledger = new Ledger(() => clock.now() - START_MS, SETTLE_BOUND_MS, view, settings.handOverMaxCount + engineCount, engineCount);
  const summary = `engines=${engineCount} keys=${keys.length} linger=${settings.lingerMs} cleanup=${settings.documentCleanup} handOver=${settings.handOverMaxCount}/${settings.handOverMaxMs}ms slowNet=${slowNet}`;
  log(`run ${options.seed}: ${summary}`);
  server.observe((ops, removedCzxids) => {
    if (!ops.some((op) => op.op === 'setData' && op.path.endsWith('/.forced-releases'))) return;
    for (const [path, czxid] of removedCzxids) if (path.endsWith(`/${PRIVATE_LOCK}`)) ledger.forced(czxid);
  });

  const uninstall = clock.install();
  let events = 0;
  try {
    const slots: EngineSlot[] = [];
    for (let index = 0; index < engineCount; index++) {
      const clients: SimClient[] = [];
      const handles: ZkHandles = {
        open: () => {
          const client = new SimClient(net, SESSION_TIMEOUT_MS, `e${index}`);
          clients.push(client);
          return { handle: client, zk: client };
        },
      };
      const events = lockEvents({
        lost: (lost) => log(`e${index} marks ${keyString(lost.key)} lost: ${lost.reason}`),
        sessionExpired: () => log(`e${index} sees its session expire`),
      });
      const engine = new ZooKeeperLockEngine({ ...settings }, quietLogger, { handles, events });
      engine.onStateChange((state) => log(`e${index} state ${state}`));
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
    actors.plan(ACTIVE_MS);
    const lastFaultEnd = planFaults(slots, faultRandom, clock, log);
    planReaper(server, faultRandom, clock, log, ACTIVE_MS + QUIET_MS);
    const step = async (): Promise<boolean> => {
      if (!clock.fireNext(START_MS + RUN_LIMIT_MS)) return false;
      events++;
      await drainPromiseJobs();
      ledger.checkStep();
      return true;
    };
    const quietAt = START_MS + Math.max(ACTIVE_MS, lastFaultEnd) + QUIET_MS;
    while ((clock.now() < quietAt || work.busy > 0) && (await step()));
    if (work.busy > 0) ledger.violate(`stuck: ${work.busy} actor operations still open at the run limit`);
    ledger.checkSettled();
    // Faults over: every document is free, so one request per document must be granted.
    actors.probe(PROBE_TIMEOUT_MS);
    // The probes' first promise jobs run now, at this instant, not after the next event.
    await drainPromiseJobs();
    while (work.busy > 0 && (await step()));
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
  }
  return { seed: options.seed, violations: ledger.violations, events, virtualMs: clock.now() - START_MS, trace, summary };
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
    foregroundTimeoutMs: 2_000,
    backgroundTimeoutMs: 2_000,
    lockRoot: ROOT,
    auth: null,
    handOverMaxCount: random.pick([1, 2, 16]),
    handOverMaxMs: random.pick([20, 100]),
    lingerMs: random.pick([0, 0, 30, 300]),
    documentCleanup: random.pick(['release', 'reaper'] as const),
  };
}

/** The client of the original algorithm, numbered after the engines in the ledger. */
interface Original {
  readonly index: number;
  /** Connected (its calls fail before). */
  readonly ready: Promise<void>;
  readonly client: OriginalClient;
  sessionId(): string;
}

/** Counts actor operations still running. */
class Work {
  busy = 0;

  track(promise: Promise<void>): void {
    this.busy++;
    void promise.finally(() => this.busy--);
  }
}

/** The actors: single and bulk acquisitions with holds, timeouts and cancellations, and forced releases. */
class Actors {
  constructor(
    private readonly slots: readonly EngineSlot[],
    private readonly keys: readonly LockKey[],
    private readonly ledger: Ledger,
    private readonly random: SimRandom,
    private readonly work: Work,
    private readonly log: (line: string) => void,
    private readonly original: Original | null,
  ) {}

  plan(activeMs: number): void {
    const operations = this.random.int(4, 24);
    for (let i = 0; i < operations; i++) {
      const at = this.random.int(0, activeMs);
      const slot = this.random.pick(this.slots);
      const kind = this.random.float();
      if (this.original !== null && kind < 0.15) this.later(at, () => this.originalLock(this.random.pick(this.keys), this.priority(), this.holdMs()));
      else if (kind < 0.55) this.later(at, () => this.single(slot, this.random.pick(this.keys), this.priority(), this.timeout(), this.holdMs()));
      else if (kind < 0.85) this.later(at, () => this.bulk(slot, this.bulkKeys(), this.priority(), this.timeout()));
      // Forced releases only without a client of the original algorithm: its unlock deletes whatever privateLock is there.
      else if (this.original === null) this.later(at, () => this.force(slot, this.heldKey()));
    }
  }

  /** One foreground acquisition per document, each from a random engine: all must be granted. */
  probe(timeoutMs: number): void {
    for (const key of this.keys) {
      const slot = this.random.pick(this.slots);
      this.work.track(
        this.acquireAndHold(slot, key, 'foreground', timeoutMs, 1, null).then((granted) => {
          if (!granted) this.ledger.violate(`liveness: probe of ${keyString(key)} on engine ${slot.index} not granted after the faults stopped`);
        }),
      );
    }
  }

  /** Operators force-release locks somebody holds (any key when nobody holds one). */
  private heldKey(): LockKey {
    const held = this.keys.filter((key) => this.ledger.holds(keyString(key)));
    return this.random.pick(held.length > 0 ? held : this.keys);
  }

  private later(at: number, body: () => void): void {
    setTimeout(body, at);
  }

  private priority(): Priority {
    return this.random.chance(0.5) ? 'foreground' : 'background';
  }

  /** Mostly short writes; some long ones, still in flight when a link goes silent or an operator steps in. */
  private holdMs(): number {
    return this.random.chance(0.15) ? this.random.int(1_000, 6_000) : this.random.int(0, 300);
  }

  private timeout(): number {
    return this.random.pick([50, 300, 1_000, 3_000, 8_000]);
  }

  private bulkKeys(): LockKey[] {
    const chosen = this.keys.filter(() => this.random.chance(0.7));
    if (this.random.chance(0.2) && chosen[0] !== undefined) chosen.push(chosen[0]);
    return chosen.length > 0 ? chosen : [this.random.pick(this.keys)];
  }

  private cancellation(waits: () => readonly Wait[]): AbortController | null {
    if (!this.random.chance(0.15)) return null;
    const controller = new AbortController();
    setTimeout(() => {
      for (const wait of waits()) wait.cancelledAt ??= this.ledger.now();
      controller.abort(new ClientGone());
    }, this.random.int(0, 1_500));
    return controller;
  }

  private single(slot: EngineSlot, key: LockKey, priority: Priority, timeoutMs: number, holdMs: number): void {
    if (slot.engine.state() === 'closed') return;
    let wait: Wait | null = null;
    const cancel = this.cancellation(() => (wait === null ? [] : [wait]));
    this.work.track(this.acquireAndHold(slot, key, priority, timeoutMs, holdMs, cancel, (started) => (wait = started)).then(() => undefined));
  }

  private async acquireAndHold(
    slot: EngineSlot,
    key: LockKey,
    priority: Priority,
    timeoutMs: number,
    holdMs: number,
    cancel: AbortController | null,
    started?: (wait: Wait) => void,
  ): Promise<boolean> {
    const wait = this.ledger.startWait(slot.index, keyString(key), priority, timeoutMs);
    started?.(wait);
    this.log(`actor e${slot.index} acquire ${keyString(key)} ${priority} timeout ${timeoutMs} (engine ${slot.engine.state()})`);
    let held: HeldLock;
    try {
      held = await slot.engine.acquire(key, priority, { timeoutMs, owner: owner(wait.id), ...(cancel === null ? {} : { signal: cancel.signal }) });
    } catch (error) {
      this.ledger.settle(wait, error);
      this.log(`actor e${slot.index} ${keyString(key)} failed: ${String(error)}`);
      return false;
    }
    this.ledger.settle(wait, null);
    const grant = this.ledger.granted(slot.index, sessionOf(slot), held, wait, this.ledger.openWaits());
    await this.hold(slot, grant, holdMs);
    return true;
  }

  private bulk(slot: EngineSlot, keys: readonly LockKey[], priority: Priority, timeoutMs: number): void {
    if (slot.engine.state() === 'closed') return;
    const waits = new Map<string, Wait>();
    for (const key of keys) if (!waits.has(keyString(key))) waits.set(keyString(key), this.ledger.startWait(slot.index, keyString(key), priority, timeoutMs, true));
    const holds: Promise<void>[] = [];
    const cancel = this.cancellation(() => [...waits.values()]);
    this.log(`actor e${slot.index} acquireEach ${[...waits.keys()].join(',')} ${priority} timeout ${timeoutMs}`);
    const done = (async () => {
      let result;
      try {
        result = await slot.engine.acquireEach(keys, priority, {
          timeoutMs,
          owner: owner(0),
          ...(cancel === null ? {} : { signal: cancel.signal }),
          onGranted: (held) => {
            const wait = waits.get(keyString(held.key));
            if (wait !== undefined) this.ledger.settle(wait, null);
            const grant = this.ledger.granted(slot.index, sessionOf(slot), held, wait, this.ledger.openWaits());
            holds.push(this.hold(slot, grant, this.holdMs()));
          },
        });
      } catch (error) {
        for (const wait of waits.values()) if (wait.settledAt === null) this.ledger.settle(wait, error);
        return;
      }
      for (const [name, failure] of result.failed) {
        const wait = waits.get(name);
        if (wait !== undefined) this.ledger.settle(wait, failure.error);
      }
      for (const wait of waits.values()) if (wait.settledAt === null) this.ledger.violate(`acquireEach left ${wait.key} on engine ${slot.index} neither granted nor failed`);
      await Promise.all(holds);
    })();
    this.work.track(done);
  }

  private async hold(slot: EngineSlot, grant: Grant, holdMs: number): Promise<void> {
    this.log(`actor e${slot.index} holds ${grant.key} (grant ${grant.id}, token ${grant.held.fencingToken}, local ${grant.held.handedOverLocally})`);
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    this.ledger.released(grant);
    this.log(`actor e${slot.index} releases ${grant.key} (grant ${grant.id})`);
    const released = grant.held.release({ handOver: this.random.chance(0.9) });
    // A client writing the same document again at once: its acquisition meets the release not yet sent.
    if (this.random.chance(0.25)) this.single(slot, grant.held.key, this.priority(), this.timeout(), this.random.int(0, 300));
    await released;
  }

  private originalLock(key: LockKey, priority: Priority, holdMs: number): void {
    const original = this.original;
    if (original === null) return;
    const wait = this.ledger.startWait(original.index, keyString(key), priority, RUN_LIMIT_MS);
    this.log(`original client locks ${keyString(key)} ${priority}`);
    const run = async (): Promise<void> => {
      let taken;
      await original.ready;
      try {
        taken = await original.client.lock(documentPath(ROOT, key), key, priority);
      } catch (error) {
        this.ledger.settle(wait, error);
        this.ledger.violate(`original client failed on ${keyString(key)}: ${String(error)}`);
        return;
      }
      this.ledger.settle(wait, null);
      const grant = this.ledger.granted(original.index, original.sessionId(), taken.held, wait, this.ledger.openWaits());
      this.log(`original client holds ${grant.key} (grant ${grant.id}, token ${grant.held.fencingToken})`);
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      this.ledger.released(grant);
      this.log(`original client unlocks ${grant.key} (grant ${grant.id})`);
      await taken.unlock();
    };
    this.work.track(run());
  }

  private force(slot: EngineSlot, key: LockKey): void {
    if (slot.engine.state() === 'closed') return;
    this.log(`admin e${slot.index} force-releases ${keyString(key)}`);
    this.work.track(
      slot.engine.forceRelease(key).then(
        (forced) => this.log(`admin e${slot.index} force-release ${keyString(key)}: ${forced}`),
        (error: unknown) => this.log(`admin e${slot.index} force-release ${keyString(key)} failed: ${String(error)}`),
      ),
    );
  }
}

/** The server session an engine holds its locks on: its newest handle's. */
function sessionOf(slot: EngineSlot): string {
  return slot.clients.at(-1)?.sessionId ?? '0';
}

function owner(request: number): { host: string; pid: number; requestId: string } {
  return { host: 'sim', pid: 1, requestId: `r${request}` };
}

/** Cut links (noticed or not, back within the session or after it expired) drawn by the seed. Returns when the last one ends. */
function planFaults(slots: readonly EngineSlot[], random: SimRandom, clock: VirtualClock, log: (line: string) => void): number {
  let lastEnd = 0;
  const count = random.int(0, 4);
  const T = SESSION_TIMEOUT_MS;
  for (let i = 0; i < count; i++) {
    const at = random.int(0, ACTIVE_MS);
    const slot = random.pick(slots);
    const kind = random.pick(['blip', 'margin', 'expiry'] as const);
    const noticeMs = kind === 'blip' ? random.int(0, 50) : random.int(0, Math.floor((2 * T) / 3));
    const backMs =
      kind === 'blip' ? noticeMs + random.int(1, 300) : kind === 'margin' ? random.int(noticeMs + T / 4 + 1, T - 1) : T + random.int(T / 10 + 1, T);
    const expireMs = T + random.int(0, T / 10);
    lastEnd = Math.max(lastEnd, at + backMs);
    clock.schedule(() => {
      // Most faults strike an engine in the middle of holding a lock.
      const holding = slots.filter((candidate) => candidate.engine.activity().held > 0);
      const target = holding.length > 0 && random.chance(0.8) ? random.pick(holding) : slot;
      const client = target.clients.at(-1);
      if (client === undefined) return;
      log(`fault ${kind} on e${target.index}`);
      client.silence(noticeMs, backMs, expireMs, 0.5);
    }, at);
  }
  return lastEnd;
}

/** ZooKeeper's container manager, at moments drawn by the seed. */
function planReaper(server: SimZooKeeper, random: SimRandom, clock: VirtualClock, log: (line: string) => void, untilMs: number): void {
  const meanMs = random.pick([20, 100, 1_000]);
  let at = 0;
  while (at < untilMs) {
    at += random.int(1, 2 * meanMs);
    clock.schedule(() => {
      const reaped = server.reapContainers();
      if (reaped.length > 0) log(`reaper deletes ${reaped.join(' ')}`);
    }, at);
  }
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
