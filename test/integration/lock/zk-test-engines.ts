import { randomUUID } from 'node:crypto';
import pino, { type Logger } from 'pino';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import type { ZooKeeperSettings } from '../../../src/config/settings.js';
import type { LockKey } from '../../../src/lock/lock-engine.js';
import type { LockEvents } from '../../../src/lock/lock-events.js';
import { PRIVATE_LOCK } from '../../../src/lock/zookeeper/znode-names.js';
import { ZooKeeperLockEngine } from '../../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { owner } from '../../unit/lock/lock-engine-suite.js';
import { TcpForwarder } from '../../support/tcp-forwarder.js';
import { type RawZkConnection, connectRawClient } from '../../support/zk-raw-client.js';

export const quietLogger: Logger = pino({ level: 'silent' });

export function zkSettings(servers: string, overrides: Partial<ZooKeeperSettings> = {}): ZooKeeperSettings {
  return {
    servers,
    sessionTimeoutMs: 4_000,
    connectionRetry: 3,
    connectionDelayMs: 200,
    foregroundPrefix: 'A',
    backgroundPrefix: 'B',
    lockRoot: `/es-lock-proxy-test-${randomUUID().slice(0, 8)}/locks`,
    auth: null,
    handOverMaxCount: 16,
    handOverMaxMs: 100,
    // The protocol tests watch the znodes right after a release; lock-linger.test.ts covers lingering.
    lingerMs: 0,
    documentCleanup: 'release',
    ...overrides,
  };
}

/**
 * Makes each key's document one `engine` knows, as a document it writes again and again: the
 * release of a document container the engine created deletes it unless the engine locked it
 * again within a second, so the second write keeps it and the engine remembers it. Its next
 * acquisition is the fast path.
 */
export async function makeKnown(engine: ZooKeeperLockEngine, keys: readonly LockKey[]): Promise<void> {
  for (const key of keys) {
    for (const write of ['first', 'again']) {
      await (await engine.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner(`warm-${write}`) })).release();
    }
  }
}

/** Engines opened by a test file, all closed by `closeAll` (call it in afterEach/afterAll). */
export class EnginePool {
  private readonly engines: ZooKeeperLockEngine[] = [];

  open(settings: ZooKeeperSettings, options: { readonly logger?: Logger; readonly events?: LockEvents } = {}): ZooKeeperLockEngine {
    const engine = new ZooKeeperLockEngine(settings, options.logger ?? quietLogger, options.events === undefined ? {} : { events: options.events });
    this.engines.push(engine);
    return engine;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.engines.splice(0).map((engine) => engine.close()));
  }
}

/** What a lock test file gets from {@link useLockFixture}. */
export interface LockFixture {
  /** The harness's ZooKeeper connect string. */
  readonly connect: string;
  readonly pool: EnginePool;
  /** A client of the file's own for looking at (and tampering with) the znodes. */
  readonly raw: RawZkConnection;
  /** A forwarder in front of the harness's ZooKeeper, to cut, delay or answer for the link; closed after the test. */
  link(): Promise<TcpForwarder>;
  /** The session owning the document's privateLock now, or null when there is none. */
  privateLockOwner(docPath: string): Promise<string | null>;
}

/**
 * The set-up the lock tests share: one raw client for the file, and the engines and links a test
 * opened closed after it, so that no session of one test outlives it into the next.
 */
export function useLockFixture(): LockFixture {
  const connect = inject('zookeeperConnect');
  const pool = new EnginePool();
  const links: TcpForwarder[] = [];
  let raw: RawZkConnection | undefined;
  beforeAll(async () => {
    raw = await connectRawClient(connect, 4_000);
  });
  afterAll(async () => {
    await raw?.close();
  });
  afterEach(async () => {
    await pool.closeAll();
    await Promise.all(links.splice(0).map((link) => link.close()));
  });
  const connected = (): RawZkConnection => {
    if (raw === undefined) throw new Error('the raw ZooKeeper client is connected in beforeAll: use it inside a test');
    return raw;
  };
  return {
    connect,
    pool,
    get raw(): RawZkConnection {
      return connected();
    },
    // Not a method of `this`: the tests take it out of the fixture.
    privateLockOwner: async (docPath: string): Promise<string | null> => {
      try {
        return (await connected().client.get(`${docPath}/${PRIVATE_LOCK}`)).stat.ephemeralOwner;
      } catch {
        return null;
      }
    },
    async link(): Promise<TcpForwarder> {
      const link = await TcpForwarder.start(connect);
      links.push(link);
      return link;
    },
  };
}
