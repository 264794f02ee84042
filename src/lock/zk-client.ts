import ZooKeeper from 'zookeeper';
import type { LockEngineStats } from './lock-stats.js';
import { isZkCode, toZkError } from './zk-errors.js';

/**
 * A typed, counted view of one `zookeeper` handle. Results of the binding are parsed here (it
 * declares `any`), rejections become `ZkError`, and per-watch callbacks only see node events:
 * the C client also delivers every session event to each pending watcher, which the session
 * module handles once for everybody.
 */
export type NodeMode = 'persistent' | 'container' | 'ephemeral' | 'ephemeralSequential';

export type WatchEventType = 'created' | 'deleted' | 'changed' | 'child';

export interface ZkStat {
  readonly version: number;
  readonly cversion: number;
  readonly ctime: number;
  readonly numChildren: number;
  /** Hex session id of the owner of an ephemeral node, "0" otherwise. */
  readonly ephemeralOwner: string;
}

export interface ZkNode {
  readonly stat: ZkStat;
  readonly data: Buffer;
}

export type ZkHandle = InstanceType<typeof ZooKeeper>;

const C = ZooKeeper.constants;

/** How long `close` waits for the binding's `close` event, which a dead link may never bring. */
const CLOSE_WAIT_MS = 1_000;

const MODE_FLAGS: Record<NodeMode, number> = {
  persistent: C.ZOO_PERSISTENT,
  container: C.ZOO_CONTAINER,
  ephemeral: C.ZOO_EPHEMERAL,
  ephemeralSequential: C.ZOO_EPHEMERAL_SEQUENTIAL,
};

const EVENT_TYPES = new Map<number, WatchEventType>([
  [C.ZOO_CREATED_EVENT, 'created'],
  [C.ZOO_DELETED_EVENT, 'deleted'],
  [C.ZOO_CHANGED_EVENT, 'changed'],
  [C.ZOO_CHILD_EVENT, 'child'],
]);

function numberField(record: Record<string, unknown>, name: string): number {
  const value = record[name];
  return typeof value === 'number' ? value : 0;
}

function parseStat(value: unknown): ZkStat {
  const record: Record<string, unknown> = typeof value === 'object' && value !== null ? { ...value } : {};
  const owner = record.ephemeralOwner;
  return {
    version: numberField(record, 'version'),
    cversion: numberField(record, 'cversion'),
    ctime: numberField(record, 'ctime'),
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

type Completion = (rc: number, text: unknown, ...result: unknown[]) => void;
type NativeWatcher = (type: number, state: number, path: string) => void;

/**
 * The binding's native object. Its JS wrapper formats every call with `util.inspect` for a
 * logger we never set, which costs more CPU than the request itself; we call the native side.
 */
interface NativeZk {
  a_create(path: string, data: string, flags: number, done: Completion): number;
  a_delete_(path: string, version: number, done: Completion): number;
  a_get(path: string, watch: boolean, done: Completion): number;
  aw_get(path: string, watcher: NativeWatcher, done: Completion): number;
  a_get_children(path: string, watch: boolean, done: Completion): number;
  aw_get_children(path: string, watcher: NativeWatcher, done: Completion): number;
}

function call(start: (done: Completion) => number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const rc = start((code, text, ...result) => {
      if (code === 0) resolve(result);
      else reject(toZkError(new Error(`${code} ${String(text)}`)));
    });
    if (typeof rc === 'number' && rc < 0) reject(toZkError(new Error(`${rc} request not queued`)));
  });
}

function nodeEvent(onEvent: (type: WatchEventType) => void): NativeWatcher {
  return (type) => {
    const eventType = EVENT_TYPES.get(type);
    if (eventType !== undefined) onEvent(eventType);
  };
}

export class ZkClient {
  private readonly handle: ZkHandle;
  private readonly stats: LockEngineStats;
  private readonly native: NativeZk;

  constructor(handle: ZkHandle, stats: LockEngineStats) {
    this.handle = handle;
    this.stats = stats;
    this.native = handle.native;
  }

  /** Hex id as in `stat.ephemeralOwner`. */
  get sessionId(): string {
    const id: unknown = this.handle.client_id;
    return typeof id === 'string' ? id : String(id);
  }

  /** Negotiated session timeout in ms (0 before the first connect). */
  get negotiatedTimeoutMs(): number {
    const timeout: unknown = this.handle.timeout;
    return typeof timeout === 'number' ? timeout : 0;
  }

  async create(path: string, data: string, mode: NodeMode): Promise<string> {
    this.stats.zkOps.create++;
    const [created] = await call((done) => this.native.a_create(path, data, MODE_FLAGS[mode], done));
    return typeof created === 'string' ? created : path;
  }


  /** `version` -1 deletes whatever version is there. */
  async delete(path: string, version = -1): Promise<void> {
    this.stats.zkOps.delete++;
    await call((done) => this.native.a_delete_(path, version, done));
  }


  async get(path: string): Promise<ZkNode> {
    this.stats.zkOps.get++;
    return parseNode(await call((done) => this.native.a_get(path, false, done)));
  }


  /** Reads a node and leaves a one-shot watch; `onEvent` never sees session events. */
  async getWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<ZkNode> {
    this.stats.zkOps.get++;
    return parseNode(await call((done) => this.native.aw_get(path, nodeEvent(onEvent), done)));
  }


  async getChildren(path: string): Promise<string[]> {
    this.stats.zkOps.getChildren++;
    const [children] = await call((done) => this.native.a_get_children(path, false, done));
    return parseChildren(children);
  }


  /** Lists children and leaves a one-shot child watch (used by tools following the seed algorithm). */
  async getChildrenWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<string[]> {
    this.stats.zkOps.getChildren++;
    const [children] = await call((done) => this.native.aw_get_children(path, nodeEvent(onEvent), done));
    return parseChildren(children);
  }


  /** Restricts a node to the identities authenticated on this session (`auth` scheme). */
  async restrictToCreator(path: string): Promise<void> {
    this.stats.zkOps.setAcl++;
    try {
      await this.handle.set_acl(path, -1, [C.ZOO_CREATOR_ALL_ACL]);
    } catch (error) {
      throw toZkError(error);
    }
  }

  /** Closes the handle (its ephemeral nodes go with the session); bounded, see CLOSE_WAIT_MS. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.handle.once('close', () => resolve()));
    this.handle.close();
    await Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
  }

  /** `add_auth` is callback-only in the binding. */
  addAuth(scheme: string, credentials: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const rc: unknown = this.handle.add_auth(scheme, credentials, (code: number, text: unknown) => {
        if (code === 0) resolve();
        else reject(toZkError(new Error(`${code} ${String(text)}`)));
      });
      if (typeof rc === 'number' && rc !== 0) reject(toZkError(new Error(`${rc} add_auth failed`)));
    });
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
