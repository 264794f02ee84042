import type { NodeMode, WatchEventType } from '../../src/zookeeper-client/zk-client.js';
import { ZK_RC, ZkError, type ZkErrorCode } from '../../src/zookeeper-client/zk-errors.js';
import type { ChildrenRead, NodeRead, NodeStat, ZkOp, TxnOpResult, TxnOutcome } from '../../src/lock/zookeeper/session/lock-zk.js';

/** One znode of the simulated tree. */
export interface SimNode {
  readonly path: string;
  readonly mode: NodeMode;
  data: string;
  readonly czxid: number;
  mzxid: number;
  pzxid: number;
  version: number;
  cversion: number;
  readonly ctime: number;
  mtime: number;
  /** Hex session id of an ephemeral node's owner, "0" otherwise. */
  readonly ephemeralOwner: string;
  /** Child names in creation order (ZooKeeper's own order is a hash set's: any order is valid). */
  readonly children: Set<string>;
}

/** Where a session's watch events go: its connection delivers them in order with its replies. */
export interface WatchSink {
  readonly sessionId: string;
  deliverWatch(fire: () => void, note: string): void;
}

interface Watch {
  readonly sink: WatchSink;
  readonly onEvent: (type: WatchEventType) => void;
}

/**
 * A watch as the client knows it (the C client's watcher tables: data, exists on a missing node,
 * children): what it sends again with setWatches when it reconnects within its session.
 */
export interface ClientWatch {
  readonly kind: 'data' | 'exist' | 'child';
  readonly path: string;
  readonly onEvent: (type: WatchEventType) => void;
}

/** One queue entry's life (an ephemeral sequential node), kept after its deletion: what the checker compares grants with. */
export interface EntryLife {
  readonly path: string;
  readonly czxid: number;
  /** Server time of its creation. */
  readonly ctime: number;
  readonly owner: string;
  /** The zxid that deleted it; null while it lives. */
  removedZxid: number | null;
}

export interface SimZooKeeperOptions {
  /**
   * The cversion a new node starts at, so its children's sequence numbers start there: near 2^31
   * the "%010d" of the signed counter wraps to negative names within a few entries, as on a
   * long-lived server.
   */
  readonly sequenceStart?: number;
}

/** A node a transaction deleted: its creation zxid and owner session ("0" for a persistent node). */
export interface RemovedNode {
  readonly czxid: number;
  readonly owner: string;
}

interface ServerSession {
  readonly id: string;
  readonly sink: WatchSink;
  readonly ephemerals: Set<string>;
}

/** ZooKeeper's answer to a failed operation, as the binding reports it. */
export function zkError(code: Exclude<ZkErrorCode, 'UNKNOWN'>, path: string): ZkError {
  return new ZkError(ZK_RC[code], `${ZK_RC[code]} ${code} ${path}`);
}

/** ZooKeeper's "%010d" of the parent's cversion, a signed 32-bit counter. */
export function sequenceSuffix(cversion: number): string {
  const value = cversion | 0;
  return value < 0 ? `-${String(-value).padStart(9, '0')}` : String(value).padStart(10, '0');
}

function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at <= 0 ? '/' : path.slice(0, at);
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function validPath(path: string, sequential: boolean): boolean {
  if (!path.startsWith('/') || path.includes('//')) return false;
  if (path.length > 1 && path.endsWith('/') && !sequential) return false;
  return !path.split('/').slice(1).some((part) => part === '.' || part === '..');
}

type Undo = () => void;

/**
 * The server side of the simulated ZooKeeper: one tree, zxids, sessions and their ephemerals,
 * one-shot watches, container reaping. Every method applies a request at once (the network
 * and its timing live in sim-session.ts) and either returns the answer or throws a `ZkError`.
 * Every write request takes a zxid, a refused one too, as ZooKeeper's error transactions do.
 */
export class SimZooKeeper {
  readonly nodes = new Map<string, SimNode>();
  private zxid = 0;
  private nextSessionNumber = 1;
  private readonly sessions = new Map<string, ServerSession>();
  private readonly dataWatches = new Map<string, Watch[]>();
  private readonly childWatches = new Map<string, Watch[]>();
  /** The zxid of each session's latest read of each node's children: what it could know of them. */
  private readonly childrenReads = new Map<string, number>();
  private readonly now: () => number;
  private observer: ((ops: readonly ZkOp[], removed: ReadonlyMap<string, RemovedNode>) => void) | null = null;
  private readonly sequenceStart: number;
  /** Every queue entry created, by parent path: alive or deleted. */
  private readonly entryLives = new Map<string, EntryLife[]>();

  constructor(now: () => number, options: SimZooKeeperOptions = {}) {
    this.now = now;
    this.sequenceStart = options.sequenceStart ?? 0;
    this.nodes.set('/', this.newNode('/', 'persistent', '', '0'));
  }

  /** Called after every committed transaction, with the czxid and owner of each node it deleted, by path. */
  observe(observer: (ops: readonly ZkOp[], removed: ReadonlyMap<string, RemovedNode>) => void): void {
    this.observer = observer;
  }

  lastZxid(): number {
    return this.zxid;
  }

  openSession(sinkFor: (id: string) => WatchSink): string {
    this.zxid++;
    const id = (0x1000 + this.nextSessionNumber++).toString(16);
    this.sessions.set(id, { id, sink: sinkFor(id), ephemerals: new Set() });
    return id;
  }

  sessionAlive(id: string): boolean {
    return this.sessions.has(id);
  }

  /** Expiry or close: the session's ephemerals go in one transaction, its watches with it. */
  closeSession(id: string): void {
    const session = this.sessions.get(id);
    if (session === undefined) return;
    this.sessions.delete(id);
    this.dropWatches(id);
    this.zxid++;
    for (const path of [...session.ephemerals].sort()) this.removeNode(path, this.zxid);
  }

  /**
   * The session's connection is gone: the server forgets the watches left through it (ZooKeeper's
   * `removeCnxn`), those it fired into the dead connection included; the client sends the ones it
   * knows of again with `setWatches`.
   */
  dropWatches(id: string): void {
    for (const watches of [this.dataWatches, this.childWatches]) {
      for (const [path, list] of watches) {
        const kept = list.filter((watch) => watch.sink.sessionId !== id);
        if (kept.length === 0) watches.delete(path);
        else watches.set(path, kept);
      }
    }
  }

  /**
   * setWatches, sent by a client reconnecting within its session with the last zxid it saw, as
   * ZooKeeper's `DataTree.setWatches` answers it: an event for each watch whose node changed
   * after that zxid, typed by what the node is now (a node deleted and created again fires
   * `changed`, not `deleted`; a node created and deleted again fires nothing and is watched for
   * its creation), and the others left again — not the events the cut link lost, replayed as
   * they happened (sim-differential-faults.test.ts compares this with the real server).
   */
  setWatches(sessionId: string, relativeZxid: number, watches: readonly ClientWatch[]): void {
    const session = this.sessions.get(sessionId);
    if (session === undefined) return;
    // The server goes through the data watches, then the exists watches, then the child watches.
    const inOrder = (['data', 'exist', 'child'] as const).flatMap((kind) => watches.filter((watch) => watch.kind === kind));
    for (const watch of inOrder) {
      const node = this.nodes.get(watch.path);
      const fire = (type: WatchEventType): void => session.sink.deliverWatch(() => watch.onEvent(type), `${type} ${watch.path}`);
      if (watch.kind === 'exist') {
        if (node !== undefined) fire('created');
        else this.addWatch(this.dataWatches, watch.path, sessionId, watch.onEvent);
      } else if (node === undefined) fire('deleted');
      else if (watch.kind === 'data' && node.mzxid > relativeZxid) fire('changed');
      else if (watch.kind === 'child' && node.pzxid > relativeZxid) fire('child');
      else this.addWatch(watch.kind === 'data' ? this.dataWatches : this.childWatches, watch.path, sessionId, watch.onEvent);
    }
  }

  create(sessionId: string, path: string, data: string, mode: NodeMode): { readonly path: string; readonly stat: NodeStat } {
    this.zxid++;
    const created = this.atomically(() => this.applyCreate(sessionId, path, data, mode, this.zxid));
    return { path: created, stat: this.statOf(this.mustGet(created)) };
  }

  delete(path: string, version: number): void {
    this.zxid++;
    this.atomically(() => this.applyDelete(path, version, this.zxid));
  }

  get(sessionId: string, path: string, onEvent?: (type: WatchEventType) => void): NodeRead {
    const node = this.nodes.get(path);
    if (node === undefined) throw zkError('NONODE', path);
    if (onEvent !== undefined) this.addWatch(this.dataWatches, path, sessionId, onEvent);
    return { stat: this.statOf(node), data: Buffer.from(node.data, 'utf8') };
  }

  /** exists: the Stat, or null; a watch is left either way (on a missing node, for its creation). */
  exists(sessionId: string, path: string, onEvent?: (type: WatchEventType) => void): NodeStat | null {
    const node = this.nodes.get(path);
    if (onEvent !== undefined) this.addWatch(this.dataWatches, path, sessionId, onEvent);
    return node === undefined ? null : this.statOf(node);
  }

  children(sessionId: string, path: string, onEvent?: (type: WatchEventType) => void): ChildrenRead {
    const node = this.nodes.get(path);
    if (node === undefined) throw zkError('NONODE', path);
    if (onEvent !== undefined) this.addWatch(this.childWatches, path, sessionId, onEvent);
    this.childrenReads.set(`${sessionId} ${path}`, this.zxid);
    return { children: [...node.children], stat: this.statOf(node) };
  }

  /** The zxid as of which `sessionId` last read the children of `path` (0: never). */
  childrenReadZxid(sessionId: string, path: string): number {
    return this.childrenReads.get(`${sessionId} ${path}`) ?? 0;
  }

  /**
   * getEphemerals as the server answers it: the session's ephemeral paths that start with
   * `prefix` as a string (not a subtree: "/a/b" matches "/a/bc"), every one for "/" or a blank
   * prefix. The server lists them from a hash set: the order is open (here: creation order).
   */
  ephemerals(sessionId: string, prefix: string): string[] {
    const owned = [...(this.sessions.get(sessionId)?.ephemerals ?? [])];
    if (prefix.trim() === '' || prefix.trim() === '/') return owned;
    return owned.filter((path) => path.startsWith(prefix));
  }

  /** All or nothing; a refused transaction names its first failing operation. */
  multi(sessionId: string, ops: readonly ZkOp[]): TxnOutcome {
    this.zxid++;
    const zxid = this.zxid;
    const undo: Undo[] = [];
    const events: (() => void)[] = [];
    this.pendingEvents = events;
    const results: TxnOpResult[] = [];
    const removed = new Map<string, RemovedNode>();
    try {
      for (const [index, op] of ops.entries()) {
        try {
          if (op.type === 'delete') {
            const node = this.nodes.get(op.path);
            removed.set(op.path, { czxid: node?.czxid ?? 0, owner: node?.ephemeralOwner ?? '0' });
          }
          results.push(this.applyOp(sessionId, op, zxid, undo));
        } catch (error) {
          if (!(error instanceof ZkError)) throw error;
          for (const step of undo.reverse()) step();
          return { ok: false, failedIndex: index, code: error.code };
        }
      }
    } finally {
      this.pendingEvents = null;
    }
    for (const fire of events) fire();
    this.observer?.(ops, removed);
    return { ok: true, results };
  }

  /** Deletes every empty container that has had a child (ZooKeeper's container manager). */
  reapContainers(): string[] {
    const reaped: string[] = [];
    for (const node of [...this.nodes.values()]) {
      if (node.mode !== 'container' || node.children.size > 0 || node.cversion === this.sequenceStart) continue;
      this.zxid++;
      this.removeNode(node.path, this.zxid);
      reaped.push(node.path);
    }
    return reaped;
  }

  /** Every ephemeral sequential child `parent` ever had, in creation order, with when it went. */
  entryHistory(parent: string): readonly EntryLife[] {
    return this.entryLives.get(parent) ?? [];
  }

  /** Ephemeral nodes under `root` and their owners. */
  ephemeralsUnder(root: string): { readonly path: string; readonly owner: string }[] {
    const found: { path: string; owner: string }[] = [];
    for (const node of this.nodes.values()) {
      if (node.ephemeralOwner !== '0' && node.path.startsWith(`${root}/`)) found.push({ path: node.path, owner: node.ephemeralOwner });
    }
    return found;
  }

  /** Events of the transaction being applied; fired only once it commits. */
  private pendingEvents: (() => void)[] | null = null;

  private atomically<T>(body: () => T): T {
    const events: (() => void)[] = [];
    this.pendingEvents = events;
    try {
      return body();
    } finally {
      this.pendingEvents = null;
      for (const fire of events) fire();
    }
  }

  private applyOp(sessionId: string, op: ZkOp, zxid: number, undo: Undo[]): TxnOpResult {
    switch (op.type) {
      case 'create': {
        const path = this.applyCreate(sessionId, op.path, String(op.data ?? ''), op.mode, zxid, undo);
        return { path, stat: this.statOf(this.mustGet(path)) };
      }
      case 'delete':
        this.applyDelete(op.path, op.version ?? -1, zxid, undo);
        return {};
      case 'check': {
        const node = this.nodes.get(op.path);
        if (node === undefined) throw zkError('NONODE', op.path);
        if (op.version !== -1 && node.version !== op.version) throw zkError('BADVERSION', op.path);
        return {};
      }
      case 'setData':
        this.applySetData(op.path, String(op.data), op.version ?? -1, zxid, undo);
        return { stat: this.statOf(this.mustGet(op.path)) };
    }
  }

  private applyCreate(sessionId: string, path: string, data: string, mode: NodeMode, zxid: number, undo?: Undo[]): string {
    const sequential = mode === 'persistentSequential' || mode === 'ephemeralSequential';
    if (!validPath(path, sequential) || path === '/') throw zkError('BADARGUMENTS', path);
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath);
    if (parent === undefined) throw zkError('NONODE', path);
    if (parent.ephemeralOwner !== '0') throw zkError('NOCHILDRENFOREPHEMERALS', path);
    const fullPath = sequential ? `${path}${sequenceSuffix(parent.cversion)}` : path;
    if (this.nodes.has(fullPath)) throw zkError('NODEEXISTS', fullPath);
    const ephemeral = mode === 'ephemeral' || mode === 'ephemeralSequential';
    const session = this.sessions.get(sessionId);
    if (ephemeral && session === undefined) throw zkError('SESSIONEXPIRED', fullPath);
    const node = this.newNode(fullPath, mode, data, ephemeral ? sessionId : '0', zxid);
    const before = { cversion: parent.cversion, pzxid: parent.pzxid };
    this.nodes.set(fullPath, node);
    parent.children.add(nameOf(fullPath));
    parent.cversion++;
    parent.pzxid = zxid;
    if (ephemeral) session?.ephemerals.add(fullPath);
    const lives = mode === 'ephemeralSequential' ? this.recordLife(parentPath, { path: fullPath, czxid: zxid, ctime: node.ctime, owner: sessionId, removedZxid: null }) : null;
    undo?.push(() => {
      lives?.pop();
      this.nodes.delete(fullPath);
      parent.children.delete(nameOf(fullPath));
      parent.cversion = before.cversion;
      parent.pzxid = before.pzxid;
      session?.ephemerals.delete(fullPath);
    });
    this.trigger(this.dataWatches, fullPath, 'created');
    this.trigger(this.childWatches, parentPath, 'child');
    return fullPath;
  }

  private applyDelete(path: string, version: number, zxid: number, undo?: Undo[]): void {
    const node = this.nodes.get(path);
    if (node === undefined || path === '/') throw zkError('NONODE', path);
    if (version !== -1 && node.version !== version) throw zkError('BADVERSION', path);
    if (node.children.size > 0) throw zkError('NOTEMPTY', path);
    const parent = this.mustGet(parentOf(path));
    const before = { pzxid: parent.pzxid };
    this.removeNode(path, zxid);
    undo?.push(() => {
      this.nodes.set(path, node);
      parent.children.add(nameOf(path));
      parent.pzxid = before.pzxid;
      if (node.ephemeralOwner !== '0') this.sessions.get(node.ephemeralOwner)?.ephemerals.add(path);
      const life = this.entryLives.get(parentOf(path))?.find((candidate) => candidate.czxid === node.czxid);
      if (life !== undefined) life.removedZxid = null;
    });
  }

  private applySetData(path: string, data: string, version: number, zxid: number, undo?: Undo[]): void {
    const node = this.nodes.get(path);
    if (node === undefined) throw zkError('NONODE', path);
    if (version !== -1 && node.version !== version) throw zkError('BADVERSION', path);
    const before = { data: node.data, version: node.version, mzxid: node.mzxid, mtime: node.mtime };
    node.data = data;
    node.version++;
    node.mzxid = zxid;
    node.mtime = this.now();
    undo?.push(() => Object.assign(node, before));
    this.trigger(this.dataWatches, path, 'changed');
  }

  private removeNode(path: string, zxid: number): void {
    const node = this.mustGet(path);
    const parentPath = parentOf(path);
    const parent = this.mustGet(parentPath);
    this.nodes.delete(path);
    // The real server counts child creations only in cversion (the differential test showed it):
    // a sequential name after a delete is not one higher.
    parent.children.delete(nameOf(path));
    parent.pzxid = zxid;
    if (node.ephemeralOwner !== '0') this.sessions.get(node.ephemeralOwner)?.ephemerals.delete(path);
    if (node.mode === 'ephemeralSequential') {
      const life = this.entryLives.get(parentPath)?.find((candidate) => candidate.czxid === node.czxid);
      if (life !== undefined) life.removedZxid = zxid;
    }
    this.trigger(this.dataWatches, path, 'deleted');
    this.trigger(this.childWatches, path, 'deleted');
    this.trigger(this.childWatches, parentPath, 'child');
  }

  private recordLife(parent: string, life: EntryLife): EntryLife[] {
    let lives = this.entryLives.get(parent);
    if (lives === undefined) {
      lives = [];
      this.entryLives.set(parent, lives);
    }
    lives.push(life);
    return lives;
  }

  private newNode(path: string, mode: NodeMode, data: string, owner: string, zxid = 0): SimNode {
    const now = this.now();
    return { path, mode, data, czxid: zxid, mzxid: zxid, pzxid: zxid, version: 0, cversion: path === '/' ? 0 : this.sequenceStart, ctime: now, mtime: now, ephemeralOwner: owner, children: new Set() };
  }

  private mustGet(path: string): SimNode {
    const node = this.nodes.get(path);
    if (node === undefined) throw new Error(`simulator: ${path} missing`);
    return node;
  }

  private statOf(node: SimNode): NodeStat & { readonly pzxid: number; readonly cversion: number; readonly numChildren: number } {
    return {
      czxid: node.czxid,
      mzxid: node.mzxid,
      pzxid: node.pzxid,
      version: node.version,
      cversion: node.cversion,
      ctime: node.ctime,
      ephemeralOwner: node.ephemeralOwner,
      numChildren: node.children.size,
    };
  }

  private addWatch(watches: Map<string, Watch[]>, path: string, sessionId: string, onEvent: (type: WatchEventType) => void): void {
    const session = this.sessions.get(sessionId);
    if (session === undefined) return;
    const list = watches.get(path);
    const watch = { sink: session.sink, onEvent };
    if (list === undefined) watches.set(path, [watch]);
    else list.push(watch);
  }

  /**
   * One-shot: every watch on `path` fires once, through its session's connection. Inside a
   * transaction the watches are taken and fired only when it commits (a refused one keeps them).
   */
  private trigger(watches: Map<string, Watch[]>, path: string, type: WatchEventType): void {
    const fire = (): void => {
      const list = watches.get(path);
      if (list === undefined) return;
      watches.delete(path);
      for (const watch of list) watch.sink.deliverWatch(() => watch.onEvent(type), `${type} ${path}`);
    };
    if (this.pendingEvents !== null) this.pendingEvents.push(fire);
    else fire();
  }
}
