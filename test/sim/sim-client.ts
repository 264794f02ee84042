import { EventEmitter } from 'node:events';
import type { WatchEventType, ZkClientEvents, NodeMode } from '../../src/zookeeper-client/zk-client.js';
import { ZK_RC, ZkError } from '../../src/zookeeper-client/zk-errors.js';
import type { ChildrenRead, LockZk, NodeRead, NodeStat, ZkOp, TxnOutcome } from '../../src/lock/zookeeper/session/lock-zk.js';
import type { SessionHandle } from '../../src/lock/zookeeper/session/session-handle.js';
import type { SimRandom } from './sim-random.js';
import { type ClientWatch, type SimZooKeeper, type WatchSink, zkError } from './sim-zookeeper.js';
import type { VirtualClock } from './virtual-clock.js';

/** The C client's close code for an expired session. */
const CLOSE_EXPIRED = -112;

/** What one simulated connection needs: the server, the clock, chance for latencies and outcomes, a trace. */
export interface SimNet {
  readonly server: SimZooKeeper;
  readonly clock: VirtualClock;
  readonly random: SimRandom;
  /** One network delay (ms), drawn by the seed; `client`: the connection it is for (`e0`, `orig`). */
  latency(client?: string): number;
  /**
   * Called when a request of this session deletes another session's `privateLock`: its czxid, and
   * the server's zxid as of the latest message (reply or watch event) the session had received when
   * it sent the request — what it could know.
   */
  foreignLockDeleted?(info: { readonly path: string; readonly czxid: number; readonly by: string; readonly heardZxid: number }): void;
  /** Whether the server refuses this transaction as a whole (THROTTLEDOP), drawn by the seed; never when absent. */
  throttled?(): boolean;
  trace(line: string): void;
}

interface Call {
  readonly label: string;
  readonly exec: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Runs when the answer reaches the client (a watch the call left counts from then on). */
  readonly onAnswered: ((value: unknown) => void) | undefined;
  processed: boolean;
}

interface Delivery {
  readonly watch: (() => void) | null;
  readonly note: string;
}

function describe(value: unknown): string {
  if (typeof value !== 'object' || value === null || !('ok' in value)) return 'ok';
  const outcome = value as TxnOutcome;
  return outcome.ok ? 'committed' : `refused at op ${outcome.failedIndex}: ${outcome.code}`;
}

/** Where the link is: `silent` is cut without the client knowing yet; `disconnected` it knows. */
type LinkState = 'opening' | 'connected' | 'silent' | 'disconnected' | 'dead';

/**
 * One simulated ZooKeeper handle: the engine's session handle and its `LockZk` port at once.
 * Requests reach the server in the order sent, and replies and watch events come back on one
 * FIFO channel, so the session sees a watch event before the reply to any request it sent after
 * the change. A cut link (`silence`) fails the requests in flight with CONNECTIONLOSS when the
 * client notices it; each was applied or not, as the seed chose; then the client reconnects
 * within the session or learns that it expired. Watch events sent into a cut link are lost; on
 * reconnect the client sends the watches it knows of again (setWatches) and the server answers
 * from the tree as it is then, as the C client and ZooKeeper do.
 */
export class SimClient implements SessionHandle, LockZk, WatchSink {
  sessionId = '0';
  readonly negotiatedTimeoutMs: number;
  private readonly net: SimNet;
  private readonly emitter = new EventEmitter();
  private link: LinkState = 'opening';
  /** Bumped at every cut: deliveries scheduled before it are void. */
  private epoch = 0;
  private lastProcessAt = 0;
  private lastDeliverAt = 0;
  private readonly pending: Call[] = [];
  /** Watches whose call's answer reached the client and whose event has not: what setWatches sends again. */
  private readonly armed = new Set<ClientWatch>();
  /** The server's latest zxid as of the latest answer the client received: setWatches' relative zxid. */
  private lastZxidSeen = 0;
  /** The server's zxid as of the latest message (reply or watch event) this session received. */
  private heardZxid = 0;
  /**
   * What the session had heard when the engine issued the request being sent now, if a request
   * gate held it back meanwhile (sim-gate.ts): the checker's "sent before it heard" counts from
   * the engine's issue, not from the gate's.
   */
  heardAtIssue: number | null = null;
  /** The client learned at a reconnect that the server had expired its session. */
  private expired = false;
  private expiryTimer: { cancel(): void } | null = null;
  private readonly name: string;
  /** Requests the engine made on this handle (sent or failed at once): the checker's budget counts them. */
  requests = 0;
  /** When the server last refused one of this handle's transactions as a whole (clock time; null: never). */
  lastRefusedAt: number | null = null;
  /** Cuts of this link so far. */
  cuts = 0;
  /** When the client noticed the current cut (null while connected or never cut): the safety margin counts from here. */
  noticedAt: number | null = null;

  constructor(net: SimNet, sessionTimeoutMs: number, name: string) {
    this.net = net;
    this.negotiatedTimeoutMs = sessionTimeoutMs;
    this.name = name;
  }

  on<E extends keyof ZkClientEvents>(event: E, listener: (...args: ZkClientEvents[E]) => void): this {
    this.emitter.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  /** The server's zxid as of the latest message this session received. */
  get heard(): number {
    return this.heardZxid;
  }

  /** The client learned that its session is over (expired or closed). */
  get dead(): boolean {
    return this.link === 'dead';
  }

  /** Usable: connected to a live session. */
  get connected(): boolean {
    return this.link === 'connected';
  }

  get alive(): boolean {
    return this.link !== 'dead' && this.sessionId !== '0' && this.net.server.sessionAlive(this.sessionId);
  }

  connect(): void {
    this.after(this.net.latency(this.name), () => {
      if (this.link !== 'opening') return;
      this.sessionId = this.net.server.openSession(() => this);
      this.link = 'connected';
      this.net.trace(`${this.name} session ${this.sessionId} connected`);
      this.emitter.emit('connect');
    });
  }

  async close(): Promise<void> {
    if (this.link === 'dead') return;
    this.link = 'dead';
    this.epoch++;
    this.expiryTimer?.cancel();
    this.net.server.closeSession(this.sessionId);
    this.net.trace(`${this.name} session ${this.sessionId} closed`);
    for (const call of this.pending.splice(0)) call.reject(zkError('CLOSING', call.label));
  }

  addAuth(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Cuts the link now. The client notices after `noticeMs` (pending calls fail, `connecting`);
   * the link is back after `backMs` (> noticeMs): `connect` within the session, or `close`
   * (expired) when the server expired it first, `expireMs` after the cut.
   */
  silence(noticeMs: number, backMs: number, expireMs: number, applyChance: number): void {
    if (this.link !== 'connected') return;
    this.cuts++;
    this.link = 'silent';
    this.epoch++;
    this.net.trace(`${this.name} link cut (notice ${noticeMs} ms, back ${backMs} ms, expiry ${expireMs} ms)`);
    for (const call of this.pending) {
      if (call.processed) continue;
      if (this.net.random.chance(applyChance)) {
        this.net.trace(`${this.name} ${call.label} applied, reply lost`);
        this.apply(call);
      } else this.net.trace(`${this.name} ${call.label} lost before the server`);
    }
    const sessionId = this.sessionId;
    const timer = this.net.clock.schedule(() => {
      this.net.trace(`${this.name} session ${sessionId} expired by the server`);
      this.net.server.closeSession(sessionId);
    }, expireMs);
    this.expiryTimer = { cancel: () => this.net.clock.cancel(timer) };
    this.after(noticeMs, () => this.notice());
    this.after(backMs, () => this.reconnect());
  }

  /** An event the server sends while the link is cut is lost: the reconnect's setWatches tells what it said. */
  deliverWatch(fire: () => void, note: string): void {
    if (this.link === 'connected') this.deliver({ watch: fire, note });
  }

  create(path: string, data: string, mode: NodeMode): Promise<{ readonly path: string; readonly stat: NodeStat }> {
    return this.request(`create ${path}`, () => this.net.server.create(this.sessionId, path, data, mode));
  }

  children(path: string): Promise<ChildrenRead> {
    return this.request(`children ${path}`, () => this.net.server.children(this.sessionId, path));
  }

  childrenWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<readonly string[]> {
    const watch = this.clientWatch('child', path, onEvent);
    return this.request(`childrenWatched ${path}`, () => this.net.server.children(this.sessionId, path, watch.onEvent).children, () => this.armed.add(watch));
  }

  get(path: string): Promise<NodeRead> {
    return this.request(`get ${path}`, () => this.net.server.get(this.sessionId, path));
  }

  getWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<NodeRead> {
    const watch = this.clientWatch('data', path, onEvent);
    return this.request(`getWatched ${path}`, () => this.net.server.get(this.sessionId, path, watch.onEvent), () => this.armed.add(watch));
  }

  existsWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<NodeStat | null> {
    const watch = this.clientWatch('data', path, onEvent);
    return this.request(
      `existsWatched ${path}`,
      () => this.net.server.exists(this.sessionId, path, watch.onEvent),
      (stat) => {
        // The C client files a watch left on a missing node among its exists watchers.
        if (stat === null) watch.kind = 'exist';
        this.armed.add(watch);
      },
    );
  }

  delete(path: string, version: number): Promise<void> {
    const heardZxid = this.heardAtIssue ?? this.heardZxid;
    return this.request(`delete ${path}@${version}`, () => this.reportingForeignDeletes([{ type: 'delete', path, version }], heardZxid, () => this.net.server.delete(path, version)));
  }

  ephemerals(prefix: string): Promise<readonly string[]> {
    return this.request(`ephemerals ${prefix}`, () => this.net.server.ephemerals(this.sessionId, prefix));
  }

  multi(ops: readonly ZkOp[]): Promise<TxnOutcome> {
    const label = `multi[${ops.map((op) => `${op.type} ${op.path}`).join(', ')}]`;
    const heardZxid = this.heardAtIssue ?? this.heardZxid;
    return this.request(label, () => {
      if (this.net.throttled?.() === true) {
        this.lastRefusedAt = this.net.clock.now();
        throw new ZkError(ZK_RC.THROTTLEDOP, `${ZK_RC.THROTTLEDOP} THROTTLEDOP ${label}`);
      }
      return this.reportingForeignDeletes(ops, heardZxid, () => this.net.server.multi(this.sessionId, ops));
    });
  }
  /** Runs `apply` (a delete or a transaction of `ops`) and reports each other session's `privateLock` it deleted. */
  private reportingForeignDeletes<T>(ops: readonly ZkOp[], heardZxid: number, apply: () => T): T {
    const foreign = ops
      .filter((op) => op.type === 'delete' && op.path.endsWith('/privateLock'))
      .map((op) => this.net.server.nodes.get(op.path))
      .filter((node) => node !== undefined && node.ephemeralOwner !== this.sessionId);
    const result = apply();
    if ((result as { readonly ok?: boolean } | undefined)?.ok === false) return result;
    for (const node of foreign) if (node !== undefined) this.net.foreignLockDeleted?.({ path: node.path, czxid: node.czxid, by: this.sessionId, heardZxid });
    return result;
  }


  /**
   * A watch as the client files it. Its event reaches the caller only through it, so an event
   * of a watch whose call's answer was lost never does (the C client files a watch only with its
   * call's answer, and the server forgets the dead connection's).
   */
  private clientWatch(kind: ClientWatch['kind'], path: string, onEvent: (type: WatchEventType) => void): { kind: ClientWatch['kind']; readonly path: string; readonly onEvent: (type: WatchEventType) => void } {
    const watch = {
      kind,
      path,
      onEvent: (type: WatchEventType): void => {
        if (!this.armed.delete(watch)) return;
        onEvent(type);
      },
    };
    return watch;
  }

  private request<T>(label: string, exec: () => T, onAnswered?: (value: T) => void): Promise<T> {
    this.requests++;
    return new Promise<T>((resolve, reject) => {
      if (this.link === 'dead') {
        // The C client refuses every call on a handle whose session it learned expired (INVALIDSTATE, as the real one answers).
        reject(zkError(this.expired ? 'INVALIDSTATE' : this.sessionId === '0' ? 'CLOSING' : 'SESSIONEXPIRED', label));
        return;
      }
      if (this.link === 'disconnected' || this.link === 'opening') {
        this.after(1, () => reject(zkError('CONNECTIONLOSS', label)));
        return;
      }
      this.net.trace(`${this.name} sends ${label}`);
      const call: Call = { label, exec, resolve: resolve as (value: unknown) => void, reject, onAnswered: onAnswered as ((value: unknown) => void) | undefined, processed: false };
      this.pending.push(call);
      if (this.link !== 'connected') return;
      const epoch = this.epoch;
      const at = Math.max(this.net.clock.now() + this.net.latency(this.name), this.lastProcessAt);
      this.lastProcessAt = at;
      this.net.clock.schedule(() => {
        if (this.epoch !== epoch || call.processed) return;
        this.apply(call);
      }, at - this.net.clock.now());
    });
  }

  /** The server applies the call; its answer goes back on the channel. */
  private apply(call: Call): void {
    call.processed = true;
    let answer: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      answer = { ok: true, value: call.exec() };
    } catch (error) {
      if (!(error instanceof ZkError)) throw error;
      answer = { ok: false, error };
    }
    this.net.trace(`${this.name} server ${call.label} -> ${answer.ok ? describe(answer.value) : (answer.error as ZkError).code}`);
    if (this.link !== 'connected') return;
    const zxid = this.net.server.lastZxid();
    this.deliver({ watch: null, note: call.label }, () => {
      const at = this.pending.indexOf(call);
      if (at >= 0) this.pending.splice(at, 1);
      this.lastZxidSeen = Math.max(this.lastZxidSeen, zxid);
      if (answer.ok) {
        call.onAnswered?.(answer.value);
        call.resolve(answer.value);
      } else call.reject(answer.error);
    });
  }

  private deliver(delivery: Delivery, reply?: () => void): void {
    const epoch = this.epoch;
    const asOfZxid = this.net.server.lastZxid();
    const at = Math.max(this.net.clock.now() + this.net.latency(this.name), this.lastDeliverAt);
    this.lastDeliverAt = at;
    this.net.clock.schedule(() => {
      if (this.epoch !== epoch) return;
      this.heardZxid = asOfZxid;
      if (delivery.watch !== null) {
        this.net.trace(`${this.name} watch ${delivery.note}`);
        delivery.watch();
      } else reply?.();
    }, at - this.net.clock.now());
  }

  private notice(): void {
    if (this.link !== 'silent') return;
    this.link = 'disconnected';
    this.noticedAt = this.net.clock.now();
    this.net.trace(`${this.name} notices the cut`);
    for (const call of this.pending.splice(0)) call.reject(zkError('CONNECTIONLOSS', call.label));
    this.emitter.emit('connecting');
  }

  private reconnect(): void {
    if (this.link !== 'disconnected') return;
    if (!this.net.server.sessionAlive(this.sessionId)) {
      this.link = 'dead';
      this.expired = true;
      this.armed.clear();
      this.net.trace(`${this.name} reconnects: session ${this.sessionId} expired`);
      this.emitter.emit('close', CLOSE_EXPIRED);
      return;
    }
    this.expiryTimer?.cancel();
    this.expiryTimer = null;
    this.link = 'connected';
    this.noticedAt = null;
    this.lastProcessAt = this.net.clock.now();
    this.lastDeliverAt = this.net.clock.now();
    this.net.trace(`${this.name} reconnects within session ${this.sessionId}`);
    // A new connection: the server forgets the old one's watches and takes the client's again.
    this.net.server.dropWatches(this.sessionId);
    this.emitter.emit('connect');
    this.net.server.setWatches(this.sessionId, this.lastZxidSeen, [...this.armed]);
  }

  private after(ms: number, body: () => void): void {
    this.net.clock.schedule(body, ms);
  }
}
