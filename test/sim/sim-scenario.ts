import type { ZooKeeperSettings } from '../../src/config/settings.js';
import type { LockEvents } from '../../src/lock/lock-events.js';
import { ZooKeeperLockEngine } from '../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { quietLogger } from '../integration/lock/zk-test-engines.js';
import { SimClient, type SimNet } from './sim-client.js';
import { SimRandom } from './sim-random.js';
import { SimZooKeeper } from './sim-zookeeper.js';
import { VirtualClock, drainPromiseJobs } from './virtual-clock.js';

/** Virtual time a scripted step may take before it fails instead of running the clock on forever. */
const STEP_LIMIT_MS = 10_000;

/**
 * One simulated ZooKeeper on the virtual clock (installed until `uninstall`), with engines opened
 * on it — what the scripted scenarios share with the seeded runs (sim-run.ts) without the seed's
 * actors and faults: the script acts, then runs the clock until what it waits for is true.
 */
export interface ScriptedWorld {
  readonly clock: VirtualClock;
  readonly server: SimZooKeeper;
  /** Every session's client, in the order the engines opened them. */
  readonly clients: readonly SimClient[];
  engine(options?: { readonly events?: LockEvents }): ZooKeeperLockEngine;
  /** Fires timers until `done()`; fails if that takes more than ten virtual seconds. */
  runUntil(done: () => boolean): Promise<void>;
  /** Fires every timer due up to `time` and sets the clock there. */
  runTo(time: number): Promise<void>;
  uninstall(): void;
}

/**
 * `latency`: each network delay in ms, drawn as a request is sent and as its answer or watch event
 * leaves the server, for the session of `client` ("e0", "e1", … in the order the engines opened them); 1 by default.
 * `trace`: each line the seeded runs would trace (what each session sends and the server answers).
 * `throttled`: asked for each transaction as the server takes it; true refuses it whole (THROTTLEDOP).
 */
export function scriptedWorld(
  settings: ZooKeeperSettings,
  options: { readonly latency?: (client?: string) => number; readonly trace?: (line: string) => void; readonly throttled?: () => boolean } = {},
): ScriptedWorld {
  const clock = new VirtualClock(1_800_000_000_000);
  const uninstall = clock.install();
  const server = new SimZooKeeper(() => clock.now());
  const net: SimNet = {
    server,
    clock,
    random: new SimRandom(1),
    latency: options.latency ?? (() => 1),
    trace: options.trace ?? (() => undefined),
    ...(options.throttled === undefined ? {} : { throttled: options.throttled }),
  };
  const clients: SimClient[] = [];
  return {
    clock,
    server,
    clients,
    engine: (options = {}) =>
      new ZooKeeperLockEngine(settings, quietLogger, {
        ...(options.events === undefined ? {} : { events: options.events }),
        handles: {
          open: () => {
            const client = new SimClient(net, settings.sessionTimeoutMs, `e${clients.length}`);
            clients.push(client);
            return { handle: client, zk: client };
          },
        },
      }),
    async runUntil(done) {
      const limit = clock.now() + STEP_LIMIT_MS;
      await drainPromiseJobs();
      while (!done() && clock.fireNext(limit)) await drainPromiseJobs();
      if (!done()) throw new Error(`condition not met within ${STEP_LIMIT_MS / 1_000} s of virtual time`);
    },
    async runTo(time) {
      await drainPromiseJobs();
      while (clock.fireNext(time)) await drainPromiseJobs();
      clock.advanceTo(time);
    },
    uninstall,
  };
}

/** The ephemeral nodes under `doc` (privateLock, queue entries) by name, and the session that owns each. */
export function nodesUnder(world: ScriptedWorld, doc: string): { readonly name: string; readonly owner: string }[] {
  return world.server.ephemeralsUnder(doc).map((node) => ({ name: node.path.slice(doc.length + 1), owner: node.owner }));
}
