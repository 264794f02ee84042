import ZooKeeper from 'zookeeper';
import type { LockEngineStats } from './lock-stats.js';
import { toZkError } from './zk-errors.js';

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

export class ZkClient {
  readonly handle: ZkHandle;
  private readonly stats: LockEngineStats;

  constructor(handle: ZkHandle, stats: LockEngineStats) {
    this.handle = handle;
    this.stats = stats;
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
    try {
      const created: unknown = await this.handle.create(path, data, MODE_FLAGS[mode]);
      return typeof created === 'string' ? created : path;
    } catch (error) {
      throw toZkError(error);
    }
  }

  /** `version` -1 deletes whatever version is there. */
  async delete(path: string, version = -1): Promise<void> {
    this.stats.zkOps.delete++;
    try {
      await this.handle.delete_(path, version);
    } catch (error) {
      throw toZkError(error);
    }
  }

  async get(path: string): Promise<ZkNode> {
    this.stats.zkOps.get++;
    try {
      return parseNode(await this.handle.get(path, false));
    } catch (error) {
      throw toZkError(error);
    }
  }

  /** Reads a node and leaves a one-shot watch; `onEvent` never sees session events. */
  async getWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<ZkNode> {
    this.stats.zkOps.get++;
    const watcher = (type: number): void => {
      const eventType = EVENT_TYPES.get(type);
      if (eventType !== undefined) onEvent(eventType);
    };
    try {
      return parseNode(await this.handle.w_get(path, watcher));
    } catch (error) {
      throw toZkError(error);
    }
  }

  async getChildren(path: string): Promise<string[]> {
    this.stats.zkOps.getChildren++;
    try {
      return parseChildren(await this.handle.get_children(path, false));
    } catch (error) {
      throw toZkError(error);
    }
  }

  /** Lists children and leaves a one-shot child watch (used by tools following the seed algorithm). */
  async getChildrenWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<string[]> {
    this.stats.zkOps.getChildren++;
    const watcher = (type: number): void => {
      const eventType = EVENT_TYPES.get(type);
      if (eventType !== undefined) onEvent(eventType);
    };
    try {
      return parseChildren(await this.handle.w_get_children(path, watcher));
    } catch (error) {
      throw toZkError(error);
    }
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
