import { randomUUID } from 'node:crypto';
import pino, { type Logger } from 'pino';
import type { ZooKeeperSettings } from '../../../src/config/settings.js';
import type { LockKey } from '../../../src/lock/lock-engine.js';
import type { LockEvents } from '../../../src/lock/lock-events.js';
import { ZooKeeperLockEngine } from '../../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { owner } from '../../unit/lock/lock-engine-suite.js';

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
