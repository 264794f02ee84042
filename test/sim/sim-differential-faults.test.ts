import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { NodeMode } from '../../src/zookeeper-client/zk-client.js';
import type { ZkOp } from '../../src/lock/zookeeper/session/lock-zk.js';
import type { SessionHandle } from '../../src/lock/zookeeper/session/session-handle.js';
import { TcpForwarder } from '../support/tcp-forwarder.js';
import { ZK_OPCODE } from '../support/zookeeper-frames.js';
import { ZkError } from '../../src/zookeeper-client/zk-errors.js';
import { type ZooKeeperCluster, lastZxid, startZooKeeper } from '../support/zookeeper-server.js';
import { Normalizer, type Side, type Step, barrier, openRealSessions, perform, simulatedSide } from './sim-differential-kit.js';

/**
 * The simulated ZooKeeper against a real one, with faults: scripted calls from three sessions,
 * session 0 behind a TCP relay on the real side (`TcpForwarder`) and on a `SimClient` link that
 * can be cut on the simulated side. Each script runs on both and every answer, error code, stat,
 * session event and watch event must match; where they differ, the simulator is wrong.
 *
 * - lost replies: the relay resets the connection as the call's reply comes back (the server
 *   applied it) or as the call arrives (the server never saw it); the client answers
 *   CONNECTIONLOSS, reconnects within its session, and the reads after it show what was applied;
 * - watches across a reconnect: the link is cut and held down while another session changes the
 *   watched nodes; on reconnect the client re-registers its watches (setWatches) and the server
 *   fires those whose node changed, by the rules of its `DataTree.setWatches`;
 * - session expiry: the link is held down until the server expired the session;
 * - transactions refused as a whole, one per failing code, and transactions the real server's
 *   request throttler refused (THROTTLEDOP): the simulated server refuses the same ones.
 *
 * Watch events between two barriers are compared as a set: the order in which one transaction's
 * (or one setWatches') events go out is the server's hash order.
 */
const SESSIONS = 3;
const SESSION_TIMEOUT_MS = 4_000;
/** Session 0's timeout where it is meant to expire: short, so the script waits little. */
const EXPIRING_TIMEOUT_MS = 2_000;
/** The simulated link stays down this long (virtual ms): past everything a script does meanwhile. */
const HELD_DOWN_MS = 10_000;
/** Every request type the scripts send (pings and the client's own setWatches are not among them). */
const CALLS = [ZK_OPCODE.create2, ZK_OPCODE.delete, ZK_OPCODE.exists, ZK_OPCODE.getData, ZK_OPCODE.getChildren, ZK_OPCODE.getChildren2, ZK_OPCODE.multi, ZK_OPCODE.getEphemerals];

let zk: ZooKeeperCluster;

beforeAll(async () => {
  // A short tick: session timeouts from 500 ms, so an expiry takes two seconds, not ten.
  zk = await startZooKeeper(1, { tickTimeMs: 250, systemProperties: { 'znode.container.checkIntervalMs': '3600000' } });
}, 60_000);

afterAll(async () => {
  await zk?.stop();
});

/** A side whose session 0 can lose its link. */
interface FaultSide extends Side {
  readonly real: boolean;
  /** The server's latest zxid. */
  zxid(): Promise<number>;
  /** Starts `call` on session 0 and cuts its link after the server applied it (its reply lost) or before it reached the server. */
  cutDuring<T>(call: () => Promise<T>, applied: boolean): Promise<T>;
  /** Cuts session 0's link (the client notices at once) and keeps it down; with `expire`, past the session's expiry. */
  cut(expire: boolean): void;
  /** Lets session 0's link back. */
  restore(): void;
  /** Waits until `done()` holds. */
  until(done: () => boolean): Promise<void>;
  close(): Promise<void>;
}

/** Session events in `seen` (repeats of one in a row once: the C client may report several connection attempts). */
function recordSessionEvents(handles: readonly SessionHandle[], seen: string[][]): void {
  for (const [session, handle] of handles.entries()) {
    const note = (entry: string): void => {
      if (seen[session]!.at(-1) !== entry) seen[session]!.push(entry);
    };
    handle.on('connect', () => note('session connect'));
    handle.on('connecting', () => note('session connecting'));
    handle.on('close', (code) => note(`session close ${code}`));
  }
}

function simulatedFaultSide(seed: number, throttled: () => boolean): FaultSide {
  const side = simulatedSide(seed, SESSIONS, SESSION_TIMEOUT_MS, throttled);
  const faulty = side.clients[0]!;
  recordSessionEvents(side.clients, side.seen);
  return {
    ...side,
    real: false,
    zxid: () => Promise.resolve(side.server.lastZxid()),
    cutDuring(call, applied) {
      const answer = call();
      faulty.silence(0, 5, HELD_DOWN_MS, applied ? 1 : 0);
      return answer;
    },
    cut(expire) {
      faulty.silence(0, HELD_DOWN_MS, expire ? HELD_DOWN_MS / 10 : 2 * HELD_DOWN_MS, 0);
    },
    // The link comes back at HELD_DOWN_MS, when the script next runs the clock that far.
    restore: () => undefined,
    close: async () => undefined,
  };
}

async function realFaultSide(server: ZooKeeperCluster, faultyTimeoutMs: number): Promise<FaultSide> {
  const relay = await TcpForwarder.start(server.connectString);
  const opened = await openRealSessions([relay.connectString, server.connectString, server.connectString], [faultyTimeoutMs, SESSION_TIMEOUT_MS, SESSION_TIMEOUT_MS]);
  const seen: string[][] = opened.map(() => []);
  recordSessionEvents(
    opened.map((handle) => handle.handle),
    seen,
  );
  return {
    real: true,
    // The low 32 bits count the transactions (the high ones are the epoch).
    zxid: async () => Number((await lastZxid(server.nodes[0]!.clientPort)) & 0xffff_ffffn),
    zks: opened.map((handle) => handle.zk),
    seen,
    settle: (call) => call,
    async cutDuring(call, applied) {
      const cut = applied ? relay.dropReplyTo(CALLS) : relay.dropRequestTo(CALLS);
      const answer = call();
      await cut;
      return answer;
    },
    cut() {
      relay.freeze();
      relay.dropAll();
    },
    restore: () => relay.unfreeze(),
    async until(done) {
      await vi.waitFor(
        () => {
          if (!done()) throw new Error('not yet');
        },
        { timeout: 15_000, interval: 5 },
      );
    },
    async close() {
      await Promise.all(opened.map((handle) => handle.handle.close()));
      await relay.close();
    },
  };
}

/** One script's run on one side: its calls, their answers and what each session saw. */
class Run {
  readonly lines: string[] = [];
  private readonly norm: Normalizer;
  private readonly watches = { n: 0 };
  private marks = 0;
  /** Sessions whose link is up: the barriers read through them. */
  private up = [0, 1, 2];

  constructor(
    readonly side: FaultSide,
    readonly root: string,
  ) {
    this.norm = new Normalizer(side.zks.map((zk) => zk.sessionId));
  }

  /** `step`'s call and its answer; with `countZxids`, how many zxids (transactions) it took too. */
  async call(step: Step, countZxids = false): Promise<void> {
    const before = countZxids ? await this.side.zxid() : 0;
    const answer = await perform(this.side, step, this.norm, this.watches);
    this.record(step, answer, countZxids ? ` (took ${(await this.side.zxid()) - before} zxids)` : '');
    await this.barrier();
  }

  /**
   * Session 0 sends `transactions` one-node creates under `parent` at once, on the real side each
   * followed by a hundred reads (a queue for the request throttler); returns which were refused.
   */
  async transactionBurst(round: number, parent: string, transactions: number): Promise<boolean[]> {
    const zk = this.side.zks[0]!;
    const reads: Promise<unknown>[] = [];
    const creates: Promise<string>[] = [];
    const before = await this.side.zxid();
    for (let i = 0; i < transactions; i++) {
      const ops: ZkOp[] = [{ type: 'create', path: `${parent}/m${round}-${i}`, data: 'm', mode: 'persistent' }];
      creates.push(
        zk.multi(ops).then(
          (outcome) => (outcome.ok ? 'committed' : `refused at op ${outcome.failedIndex}: ${outcome.code}`),
          (error: unknown) => {
            if (error instanceof ZkError) return error.code;
            throw error;
          },
        ),
      );
      if (this.side.real) for (let read = 0; read < 100; read++) reads.push(zk.get(parent).catch(() => undefined));
    }
    const outcomes = await this.side.settle(Promise.all(creates));
    await this.side.settle(Promise.all(reads));
    this.lines.push(`round ${round}: ${outcomes.join(', ')} (took ${(await this.side.zxid()) - before} zxids)`);
    await this.barrier();
    return outcomes.map((outcome) => outcome === 'THROTTLEDOP');
  }

  /** `step` on session 0, its link cut as it runs; then the client is back within its session. */
  async lost(step: Step, applied: boolean): Promise<void> {
    const connects = this.count(0, 'session connect');
    const answer = await this.side.cutDuring(() => perform(this.side, step, this.norm, this.watches), applied);
    this.record(step, answer, applied ? ' (applied, reply lost)' : ' (lost before the server)');
    await this.side.until(() => this.count(0, 'session connect') > connects);
    await this.barrier();
  }

  cut(expire: boolean): void {
    this.side.cut(expire);
    this.up = [1, 2];
    this.lines.push(expire ? 's0 link cut until its session expired' : 's0 link cut');
  }

  /** Lets session 0 back and waits until it learned how: reconnected, or its session expired. */
  async restore(expect: 'session connect' | 'session close -112'): Promise<void> {
    const before = this.count(0, expect);
    this.side.restore();
    await this.side.until(() => this.count(0, expect) > before);
    if (expect === 'session connect') this.up = [0, 1, 2];
    this.lines.push(`s0 link back: ${expect}`);
    await this.barrier();
  }

  /** Waits until `session` saw `events` watch events in all. */
  async watchEvents(session: number, events: number): Promise<void> {
    await this.side.until(() => this.side.seen[session]!.filter((entry) => entry.startsWith('watch#')).length >= events);
    await this.barrier();
  }

  text(): string {
    const seen = this.side.seen.map((entries, session) => `session ${session}: ${byWindow(entries).join(', ')}`);
    return this.norm.ranks([...this.lines, ...seen].join('\n'));
  }

  private record(step: Step, answer: unknown, note = ''): void {
    this.lines.push(`${JSON.stringify(step)}${note} -> ${JSON.stringify(answer)}`);
  }

  private count(session: number, entry: string): number {
    return this.side.seen[session]!.filter((seen) => seen === entry).length;
  }

  private async barrier(): Promise<void> {
    await barrier(this.side, this.root, this.marks++, this.up);
  }
}

/** Entries between two barrier marks as a set (sorted), the marks in place. */
function byWindow(entries: readonly string[]): string[] {
  const out: string[] = [];
  let window: string[] = [];
  for (const entry of entries) {
    if (!entry.startsWith('after step')) {
      window.push(entry);
      continue;
    }
    out.push(...window.sort(), entry);
    window = [];
  }
  return [...out, ...window.sort()];
}

type Script = (run: Run, root: string) => Promise<void>;

interface CompareOptions {
  /** Session 0's session timeout on the real server. */
  readonly faultyTimeoutMs?: number;
  readonly server?: ZooKeeperCluster;
  /** Which transactions the simulated server refuses as a whole (in the order it applies them). */
  readonly throttled?: () => boolean;
}

/** Runs `script` on the real server, then on the simulator, and compares the two. */
async function compare(name: string, script: Script, options: CompareOptions = {}): Promise<string> {
  const root = `/dfault-${name}-${Date.now().toString(36)}`;
  const texts: string[] = [];
  const sides = [() => realFaultSide(options.server ?? zk, options.faultyTimeoutMs ?? SESSION_TIMEOUT_MS), () => Promise.resolve(simulatedFaultSide(name.length, options.throttled ?? (() => false)))];
  for (const open of sides) {
    const side = await open();
    const run = new Run(side, root);
    try {
      await run.call({ kind: 'create', session: 1, path: root, mode: 'persistent' });
      await script(run, root);
      texts.push(run.text());
    } finally {
      await side.close();
    }
  }
  const [realText, simText] = texts;
  expect(simText, `${name} (root ${root})`).toBe(realText);
  return realText!;
}

const persistent = (session: number, path: string): Step => ({ kind: 'create', session, path, mode: 'persistent' });
const setData = (session: number, path: string, data: string, version = -1): Step => ({ kind: 'multi', session, ops: [{ type: 'setData', path, data, version }] });
const multi = (session: number, ...ops: ZkOp[]): Step => ({ kind: 'multi', session, ops });
const read = (kind: 'get' | 'getWatched' | 'existsWatched' | 'children' | 'childrenWatched', session: number, path: string): Step => ({ kind, session, path });

/** Calls of session 0 whose link is cut as they run, and what the server shows of each afterwards. */
function lostReplies(applied: boolean): Script {
  return async (run, r) => {
    for (const name of ['a', 'b', 'k', 'w']) await run.call(persistent(1, `${r}/${name}`));
    // Armed before every cut: it must survive the reconnects and fire once at the end.
    await run.call(read('getWatched', 0, `${r}/b`));
    await run.lost(persistent(0, `${r}/c`), applied);
    await run.call(read('get', 1, `${r}/c`));
    await run.call(read('get', 0, `${r}/c`));
    await run.lost({ kind: 'create', session: 0, path: `${r}/e-`, mode: 'ephemeralSequential' }, applied);
    await run.call(read('children', 1, r));
    await run.call({ kind: 'ephemerals', session: 0, prefix: `${r}/`, root: r });
    await run.lost({ kind: 'delete', session: 0, path: `${r}/a`, version: -1 }, applied);
    await run.call(read('get', 1, `${r}/a`));
    await run.lost(multi(0, { type: 'create', path: `${r}/m`, data: 'm', mode: 'persistent' }, { type: 'setData', path: `${r}/k`, data: 'k1', version: -1 }), applied);
    await run.call(read('get', 1, `${r}/m`));
    await run.call(read('get', 1, `${r}/k`));
    // Watches asked for by calls whose answer was lost: does the change that follows reach session 0?
    await run.lost(read('getWatched', 0, `${r}/w`), applied);
    await run.call(setData(1, `${r}/w`, 'w1'));
    await run.lost(read('existsWatched', 0, `${r}/x`), applied);
    await run.call(persistent(1, `${r}/x`));
    await run.lost(read('childrenWatched', 0, `${r}/k`), applied);
    await run.call(persistent(1, `${r}/k/c`));
    await run.call(setData(1, `${r}/b`, 'b1'));
    await run.call({ kind: 'ephemerals', session: 0, prefix: `${r}/`, root: r });
  };
}

/** Watches of session 0 set before its link is cut; another session changes their nodes while it is down. */
const watchesAcrossReconnect: Script = async (run, r) => {
  for (const name of ['a', 'b', 'c', 'd', 'g', 'h', 'i', 'j', 'k', 'l']) await run.call(persistent(1, `${r}/${name}`));
  for (const name of ['a', 'b', 'c', 'd', 'l']) await run.call(read('getWatched', 0, `${r}/${name}`));
  for (const name of ['e', 'f', 'g']) await run.call(read('existsWatched', 0, `${r}/${name}`));
  for (const name of ['h', 'i', 'j', 'k']) await run.call(read('childrenWatched', 0, `${r}/${name}`));
  run.cut(false);
  await run.call(setData(1, `${r}/a`, 'a1'));
  await run.call({ kind: 'delete', session: 1, path: `${r}/c`, version: -1 });
  await run.call({ kind: 'delete', session: 1, path: `${r}/d`, version: -1 });
  await run.call(persistent(1, `${r}/d`));
  await run.call(persistent(1, `${r}/e`));
  await run.call(persistent(1, `${r}/f`));
  await run.call({ kind: 'delete', session: 1, path: `${r}/f`, version: -1 });
  await run.call(setData(1, `${r}/g`, 'g1'));
  await run.call(persistent(1, `${r}/h/1`));
  await run.call(persistent(1, `${r}/i/1`));
  await run.call({ kind: 'delete', session: 1, path: `${r}/i/1`, version: -1 });
  await run.call({ kind: 'delete', session: 1, path: `${r}/k`, version: -1 });
  await run.call(setData(1, `${r}/l`, 'l1'));
  await run.call({ kind: 'delete', session: 1, path: `${r}/l`, version: -1 });
  await run.restore('session connect');
  // Watches whose node did not change are armed again: these changes fire them, and only them.
  await run.call(setData(1, `${r}/b`, 'b1'));
  await run.call(persistent(1, `${r}/f`));
  await run.call(persistent(1, `${r}/j/1`));
  await run.call(setData(1, `${r}/a`, 'a2'));
  await run.call(setData(1, `${r}/d`, 'd1'));
};

/** Session 0 holds a document's lock nodes when its link goes down for longer than its session. */
const sessionExpiry: Script = async (run, r) => {
  const doc = `${r}/doc`;
  await run.call(persistent(1, doc));
  await run.call(persistent(1, `${r}/own`));
  await run.call({ kind: 'create', session: 0, path: `${doc}/A-`, mode: 'ephemeralSequential' });
  await run.call({ kind: 'create', session: 0, path: `${doc}/privateLock`, mode: 'ephemeral' });
  await run.call(read('getWatched', 0, `${r}/own`));
  await run.call(read('childrenWatched', 0, doc));
  await run.call(read('existsWatched', 0, `${r}/later`));
  await run.call(read('getWatched', 1, `${doc}/privateLock`));
  await run.call(read('childrenWatched', 1, doc));
  await run.call(read('existsWatched', 2, `${doc}/privateLock`));
  await run.call(read('getWatched', 2, doc));
  run.cut(true);
  // The server's expiry deletes the session's ephemerals: the other sessions' watches tell.
  await run.watchEvents(1, 2);
  await run.watchEvents(2, 1);
  await run.call(read('children', 1, doc));
  await run.call(setData(1, `${r}/own`, 'own1'));
  await run.call(persistent(1, `${r}/later`));
  await run.restore('session close -112');
  await run.call(read('get', 0, doc));
  await run.call({ kind: 'create', session: 0, path: `${doc}/A-`, mode: 'ephemeralSequential' });
  await run.call(multi(0, { type: 'check', path: doc, version: -1 }));
  await run.call({ kind: 'ephemerals', session: 0, prefix: `${r}/`, root: r });
  await run.call(read('get', 1, doc));
};

/** Transactions refused by one operation: nothing of them applied, no watch fired, the failing operation named. */
const refusedTransactions: Script = async (run, r) => {
  const create = (path: string, mode: NodeMode = 'persistent'): ZkOp => ({ type: 'create', path, data: 'n', mode });
  await run.call(persistent(1, `${r}/a`));
  await run.call(persistent(1, `${r}/a/c`));
  await run.call(persistent(1, `${r}/p`));
  await run.call(read('getWatched', 0, `${r}/a`));
  await run.call(read('childrenWatched', 0, r));
  await run.call(read('childrenWatched', 0, `${r}/a`));
  await run.call(read('existsWatched', 0, `${r}/new`));
  await run.call(read('getWatched', 0, `${r}/p`));
  await run.call(multi(1, create(`${r}/new`), { type: 'delete', path: `${r}/missing`, version: -1 }), true);
  await run.call(multi(1, create(`${r}/new`), create(`${r}/a`)), true);
  await run.call(multi(1, { type: 'check', path: `${r}/a`, version: 0 }, { type: 'setData', path: `${r}/a`, data: 'v', version: 5 }), true);
  await run.call(multi(1, { type: 'setData', path: `${r}/a`, data: 'x', version: -1 }, { type: 'delete', path: `${r}/a`, version: -1 }), true);
  await run.call(multi(1, { type: 'check', path: `${r}/missing`, version: -1 }, create(`${r}/new`)), true);
  await run.call(multi(1, { type: 'delete', path: `${r}/p`, version: 3 }), true);
  await run.call(multi(1, create(`${r}/new`, 'ephemeral'), create(`${r}/new/child`)), true);
  await run.call(multi(1, create(`${r}/q-`, 'persistentSequential'), create(`${r}/a`)), true);
  await run.call({ kind: 'create', session: 1, path: `${r}/q-`, mode: 'persistentSequential' }, true);
  await run.call(persistent(1, `${r}/a`), true);
  await run.call(read('get', 1, `${r}/a`));
  await run.call(read('children', 1, r));
  await run.call(multi(1, create(`${r}/new`), { type: 'setData', path: `${r}/a`, data: 'y', version: -1 }, { type: 'delete', path: `${r}/a/c`, version: -1 }), true);
};

/** Transactions sent at once per round, and rounds at most until the real server refused some. */
const TRANSACTIONS = 20;
const MAX_ROUNDS = 10;

/**
 * Rounds of transactions on a server whose request throttler refuses what waited too long in its
 * queue. Whether a request waits that long is the server's timing, not the client's: the real side
 * goes round until the server refused some (`refused` gets its decisions, `rounds` its count);
 * the simulated side runs as many rounds and its server refuses the same ones. The first
 * transaction of a round, ahead of the reads, is mostly committed: a round mixes both.
 */
function throttledTransactions(refused: boolean[], rounds: { n: number }): Script {
  return async (run, r) => {
    await run.call(read('childrenWatched', 1, r));
    for (let round = 0; run.side.real ? !refused.includes(true) && round < MAX_ROUNDS : round < rounds.n; round++) {
      const decisions = await run.transactionBurst(round, r, TRANSACTIONS);
      if (run.side.real) refused.push(...decisions);
      if (run.side.real) rounds.n = round + 1;
    }
    await run.call(read('children', 1, r));
  };
}

describe('simulated ZooKeeper against the real server, with faults', () => {
  it('loses the reply of a call the server applied as the real client does', { timeout: 30_000 }, async () => {
    const text = await compare('applied', lostReplies(true));
    expect(text.match(/"error":"CONNECTIONLOSS"/g)).toHaveLength(7);
  });

  it('loses a call before the server as the real client does', { timeout: 30_000 }, async () => {
    const text = await compare('lost', lostReplies(false));
    expect(text.match(/"error":"CONNECTIONLOSS"/g)).toHaveLength(7);
  });

  it('fires the watches of a session across a reconnect as the real server does', { timeout: 30_000 }, async () => {
    const text = await compare('watches', watchesAcrossReconnect);
    expect(text).toMatch(/watch#\d+ changed/);
  });

  it('expires a session whose link stays down as the real server does', { timeout: 30_000 }, async () => {
    const text = await compare('expiry', sessionExpiry, { faultyTimeoutMs: EXPIRING_TIMEOUT_MS });
    expect(text).toContain('session close -112');
  });

  it('refuses transactions as a whole as the real server does', { timeout: 30_000 }, async () => {
    const text = await compare('refused', refusedTransactions);
    for (const code of ['NONODE', 'NODEEXISTS', 'BADVERSION', 'NOTEMPTY', 'NOCHILDRENFOREPHEMERALS']) expect(text).toContain(`"code":"${code}"`);
  });
});

describe('simulated ZooKeeper against a real server that throttles requests', () => {
  let throttling: ZooKeeperCluster;

  beforeAll(async () => {
    // One request in the pipeline at a time; one that waited over 2 ms in the throttler's queue is refused (THROTTLEDOP).
    throttling = await startZooKeeper(1, {
      systemProperties: { 'znode.container.checkIntervalMs': '3600000', 'zookeeper.request_throttle_max_requests': '1', 'zookeeper.throttled_op_wait_time': '2' },
    });
  }, 60_000);

  afterAll(async () => {
    await throttling?.stop();
  });

  it('refuses the transactions the real server throttled as a whole, as the real one does', { timeout: 30_000 }, async () => {
    const refused: boolean[] = [];
    let next = 0;
    const text = await compare('throttled', throttledTransactions(refused, { n: 0 }), { server: throttling, throttled: () => refused[next++] ?? false });
    expect(refused.filter(Boolean).length, 'transactions the real server throttled').toBeGreaterThan(0);
    expect(text).toContain('THROTTLEDOP');
  });
});
