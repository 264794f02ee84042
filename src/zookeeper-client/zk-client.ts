import { EventEmitter } from 'node:events';
import type { LockEngineStats } from '../lock/lock-stats.js';
import { type NativeCompletion, type NativeConstants, type NativeWatcher, type NativeZooKeeper, loadZkAddon } from './zk-addon.js';
import { isZkCode, toZkError } from './zk-errors.js';
import { type NodeAcl, type ZkOp, type ZkOpResult, ZkMultiError, failedOpIndex } from './zk-multi.js';
import { ACL_MODES, type NativeMultiAnswer, answeredPerOp, decodeMulti, encodeMulti } from './zk-multi-native.js';
import type { NodeMode, WatchEventType, ZkStat } from './zk-node-types.js';
import { withinMs } from './within-ms.js';

export type { NodeMode, WatchEventType, ZkStat } from './zk-node-types.js';

/**
 * A typed, counted view of one handle of our ZooKeeper addon (native/, see zk-addon.ts). Results
 * of the addon are parsed here, rejections become `ZkError` (`ZkMultiError` for a transaction an
 * op failed), and per-watch callbacks only see node events: the C client also delivers every
 * session event to each pending watcher, which the session module handles once for everybody.
 */
export interface ZkNode {
  readonly stat: ZkStat;
  readonly data: Buffer;
}

export interface ZkChildren {
  readonly children: string[];
  /** The parent's Stat (its cversion, pzxid and numChildren describe the list). */
  readonly stat: ZkStat;
}

export interface ZkCreated {
  readonly path: string;
  readonly stat: ZkStat;
}

/** Session events of the handle: `close` carries the C client's code (-112 expired, -113 auth failed, 0 closed by us). */
export interface ZkClientEvents {
  connect: [];
  connecting: [];
  close: [code: number];
}

export interface ZkClientOptions {
  /** Connect string `host:port,...[/chroot]`. */
  readonly servers: string;
  readonly sessionTimeoutMs: number;
}

/** How long `close` waits for the server to end the session (a dead link never answers). */
const CLOSE_WAIT_MS = 1_000;

function modeFlags(C: NativeConstants): Record<NodeMode, number> {
  return {
    persistent: C.ZOO_PERSISTENT,
    persistentSequential: C.ZOO_PERSISTENT_SEQUENTIAL,
    container: C.ZOO_CONTAINER,
    ephemeral: C.ZOO_EPHEMERAL,
    ephemeralSequential: C.ZOO_EPHEMERAL_SEQUENTIAL,
  };
}

function eventTypes(C: NativeConstants): Map<number, WatchEventType> {
  return new Map<number, WatchEventType>([
    [C.ZOO_CREATED_EVENT, 'created'],
    [C.ZOO_DELETED_EVENT, 'deleted'],
    [C.ZOO_CHANGED_EVENT, 'changed'],
    [C.ZOO_CHILD_EVENT, 'child'],
  ]);
}

function numberField(record: Record<string, unknown>, name: string): number {
  const value = record[name];
  return typeof value === 'number' ? value : 0;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? { ...value } : {};
}

function parseStat(value: unknown): ZkStat {
  const record = asRecord(value);
  const owner = record.ephemeralOwner;
  return {
    czxid: numberField(record, 'czxid'),
    mzxid: numberField(record, 'mzxid'),
    pzxid: numberField(record, 'pzxid'),
    version: numberField(record, 'version'),
    cversion: numberField(record, 'cversion'),
    aversion: numberField(record, 'aversion'),
    ctime: numberField(record, 'ctime'),
    mtime: numberField(record, 'mtime'),
    dataLength: numberField(record, 'dataLength'),
    numChildren: numberField(record, 'numChildren'),
    ephemeralOwner: typeof owner === 'string' ? owner : '0',
  };
}

function parseNode(value: unknown): ZkNode {
  const [stat, data]: unknown[] = Array.isArray(value) ? value : [];
  const bytes = Buffer.isBuffer(data) ? data : typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.alloc(0);
  return { stat: parseStat(stat), data: bytes };
}

function parseChildren(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter((child): child is string => typeof child === 'string');
}


function call(start: (done: NativeCompletion) => number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const rc = start((code, text, ...result) => {
      if (code === 0) resolve(result);
      else reject(toZkError(new Error(`${code} ${String(text)}`)));
    });
    if (typeof rc === 'number' && rc < 0) reject(toZkError(new Error(`${rc} request not queued`)));
  });
}

export class ZkClient {
  private readonly native: NativeZooKeeper;
  private readonly stats: LockEngineStats;
  private readonly events = new EventEmitter();
  private readonly flags: Record<NodeMode, number>;
  private readonly eventTypes: Map<number, WatchEventType>;
  private readonly permAll: number;
  private readonly options: ZkClientOptions;
  private connected = false;

  /** A handle of the addon (loaded on first use: throws `ZkAddonError` when it is unusable); `connect()` starts it. */
  constructor(options: ZkClientOptions, stats: LockEngineStats) {
    const { ZooKeeper } = loadZkAddon();
    this.options = options;
    this.stats = stats;
    this.flags = modeFlags(ZooKeeper);
    this.eventTypes = eventTypes(ZooKeeper);
    this.permAll = ZooKeeper.ZOO_PERM_ALL;
    this.native = new ZooKeeper();
    this.native.emit = (event, _self, data) => this.onNativeEvent(event, data);
  }

  on<E extends keyof ZkClientEvents>(event: E, listener: (...args: ZkClientEvents[E]) => void): this {
    this.events.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  once<E extends keyof ZkClientEvents>(event: E, listener: (...args: ZkClientEvents[E]) => void): this {
    this.events.once(event, listener as (...args: unknown[]) => void);
    return this;
  }

  /** Starts connecting; `connect` is emitted on every (re)connection of the session. */
  connect(): void {
    this.native.init({ connect: this.options.servers, timeout: this.options.sessionTimeoutMs, debug_level: 0 });
  }

  /** Hex id as in `stat.ephemeralOwner`. */
  get sessionId(): string {
    const id: unknown = this.native.client_id;
    return typeof id === 'string' ? id : String(id);
  }

  /** Negotiated session timeout in ms (0 before the first connect). */
  get negotiatedTimeoutMs(): number {
    const timeout: unknown = this.native.timeout;
    return typeof timeout === 'number' && timeout > 0 ? timeout : 0;
  }

  async create(path: string, data: string, mode: NodeMode): Promise<string> {
    this.stats.zkOps.create++;
    const [created] = await call((done) => this.native.a_create(path, data, this.flags[mode], done));
    return typeof created === 'string' ? created : path;
  }

  /** Creates a node and returns its path (sequential nodes: with the number) and Stat (czxid: the create's zxid). */
  async create2(path: string, data: string | Buffer, mode: NodeMode, acl: NodeAcl = 'open'): Promise<ZkCreated> {
    this.stats.zkOps.create++;
    const [created, stat] = await call((done) => this.native.a_create2(path, data, this.flags[mode], ACL_MODES[acl], done));
    return { path: typeof created === 'string' ? created : path, stat: parseStat(stat) };
  }

  /** `version` -1 deletes whatever version is there. */
  async delete(path: string, version = -1): Promise<void> {
    this.stats.zkOps.delete++;
    await call((done) => this.native.a_delete_(path, version, done));
  }

  /** Replaces a node's data if its data version is `version` (-1: any) and returns the new Stat. */
  async setData(path: string, data: string | Buffer, version = -1): Promise<ZkStat> {
    this.stats.zkOps.setData++;
    const [stat] = await call((done) => this.native.a_set(path, data, version, done));
    return parseStat(stat);
  }

  async get(path: string): Promise<ZkNode> {
    this.stats.zkOps.get++;
    return parseNode(await call((done) => this.native.a_get(path, false, done)));
  }

  /** Reads a node and leaves a one-shot watch; `onEvent` never sees session events. */
  async getWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<ZkNode> {
    this.stats.zkOps.get++;
    return parseNode(await call((done) => this.native.aw_get(path, this.nodeEvent(onEvent), done)));
  }

  /**
   * A node's Stat without its data (exists), leaving a one-shot watch; `onEvent` never sees session
   * events. Null when there is no such node: ZooKeeper then leaves the watch for the node's
   * creation, and it fires `created` once when anybody creates that path.
   */
  async existsWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<ZkStat | null> {
    this.stats.zkOps.exists++;
    try {
      const [stat] = await call((done) => this.native.aw_exists(path, this.nodeEvent(onEvent), done));
      return parseStat(stat);
    } catch (error) {
      if (isZkCode(error, 'NONODE')) return null;
      throw error;
    }
  }

  async getChildren(path: string): Promise<string[]> {
    this.stats.zkOps.getChildren++;
    const [children] = await call((done) => this.native.a_get_children(path, false, done));
    return parseChildren(children);
  }

  /** Lists children and leaves a one-shot child watch (used by tools following the seed algorithm). */
  async getChildrenWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<string[]> {
    this.stats.zkOps.getChildren++;
    const [children] = await call((done) => this.native.aw_get_children(path, this.nodeEvent(onEvent), done));
    return parseChildren(children);
  }

  /** Children and the parent's Stat, read together. */
  async getChildren2(path: string): Promise<ZkChildren> {
    this.stats.zkOps.getChildren++;
    const [children, stat] = await call((done) => this.native.a_get_children2(path, false, done));
    return { children: parseChildren(children), stat: parseStat(stat) };
  }

  /** `getChildren2` leaving a one-shot child watch. */
  async getChildren2Watched(path: string, onEvent: (type: WatchEventType) => void): Promise<ZkChildren> {
    this.stats.zkOps.getChildren++;
    const [children, stat] = await call((done) => this.native.aw_get_children2(path, this.nodeEvent(onEvent), done));
    return { children: parseChildren(children), stat: parseStat(stat) };
  }

  /**
   * Paths of the ephemeral nodes this session owns whose path starts with `prefix` (a string
   * prefix, not a subtree: "/a/b" also matches "/a/bc"). ZooKeeper 3.6+; older servers refuse it
   * (UNIMPLEMENTED).
   */
  async getEphemerals(prefix: string): Promise<string[]> {
    this.stats.zkOps.getEphemerals++;
    const [paths] = await call((done) => this.native.a_get_ephemerals(prefix, done));
    return parseChildren(paths);
  }

  /**
   * Runs the ops as one transaction (one zxid): all applied, or none. Resolves with one result
   * per op; rejects with `ZkMultiError` naming the op that failed, or with a `ZkError` when the
   * request itself failed (e.g. CONNECTIONLOSS: the outcome is then unknown).
   *
   * Creates are sent as create2. Servers before 3.9 answer them with the path only
   * (ZOOKEEPER-4026; containers do get their Stat): their Stat is then derived from the
   * transaction's zxid, which is exact except ctime/mtime (0): a node created by a transaction
   * has czxid = mzxid = pzxid = its zxid, versions 0, no children, ephemeralOwner = this session
   * for ephemeral modes, dataLength = the bytes sent. A create without its own `acl` gets `defaultAcl`.
   */
  async multi(ops: readonly ZkOp[], defaultAcl: NodeAcl = 'open'): Promise<ZkOpResult[]> {
    this.stats.zkOps.multi++;
    this.stats.zkOps.multiOps += ops.length;
    const { kinds, ints, paths, data } = encodeMulti(ops, this.flags, defaultAcl);
    const [rc, text, answer, zxid] = await new Promise<[number, unknown, NativeMultiAnswer, unknown]>((resolve, reject) => {
      const queued = this.native.a_multi(kinds, ints, paths, data, (code, message, rcs, created, stats, owners, txZxid) =>
        resolve([code, message, { rcs, paths: created, stats, owners }, txZxid]),
      );
      if (queued < 0) reject(toZkError(new Error(`${queued} request not queued`)));
    });
    // No answer per op: the request itself failed (not sent, connection lost, handle closed).
    if (!answeredPerOp(answer)) throw toZkError(new Error(`${rc} ${String(text)}`));
    // Read from the handle once per transaction, not per created node (a native call each).
    let owner: string | undefined;
    const created = { zxid: typeof zxid === 'number' ? zxid : 0, sessionId: (): string => (owner ??= this.sessionId) };
    const parsed = decodeMulti(ops, answer, rc, created);
    if (rc === 0) return parsed;
    const failed = failedOpIndex(parsed);
    if (failed >= 0) this.stats.zkOps.multiRefused++;
    throw failed >= 0 ? new ZkMultiError(failed, ops, parsed) : toZkError(new Error(`${rc} ${String(text)}`));
  }

  /** Restricts a node to the identities authenticated on this session (`auth` scheme). */
  async restrictToCreator(path: string): Promise<void> {
    this.stats.zkOps.setAcl++;
    await call((done) => this.native.a_set_acl(path, -1, [{ perm: this.permAll, scheme: 'auth', auth: '' }], done));
  }

  /**
   * Ends the session (its ephemeral nodes go with it) and frees the handle, never stopping the
   * event loop (the C client's own close blocks it for up to 4.5 s, see native/zk-close.h): the
   * server is asked to end the session, at most CLOSE_WAIT_MS; then the connection is dropped.
   * Without an answer in time (ZooKeeper out of reach) the server ends the session at its expiry.
   */
  async close(): Promise<void> {
    if (this.connected) await withinMs(CLOSE_WAIT_MS, call((done) => this.native.a_close_session(done)));
    this.native.close(true);
  }

  addAuth(scheme: string, credentials: string): Promise<void> {
    return call((done) => this.native.add_auth(scheme, credentials, done)).then(() => undefined);
  }

  private onNativeEvent(event: string, data: unknown): void {
    if (event !== 'close' && event !== 'connect' && event !== 'connecting') return;
    this.connected = event === 'connect';
    if (event === 'close') this.events.emit('close', typeof data === 'number' ? data : 0);
    else this.events.emit(event);
  }

  private nodeEvent(onEvent: (type: WatchEventType) => void): NativeWatcher {
    return (type) => {
      const eventType = this.eventTypes.get(type);
      if (eventType !== undefined) onEvent(eventType);
    };
  }
}

/** Children of `path`, or none when it does not exist (a reaped container is an empty queue). */
export async function childrenOrEmpty(client: ZkClient, path: string): Promise<string[]> {
  try {
    return await client.getChildren(path);
  } catch (error) {
    if (isZkCode(error, 'NONODE')) return [];
    throw error;
  }
}
