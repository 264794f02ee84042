import { ProxyError } from '../errors/proxy-error.js';
import type { LockKey } from './lock-engine.js';

/** The wait for a lock exceeded its timeout; the queue entry is already gone. */
export class LockTimeoutError extends ProxyError {
  constructor(key: LockKey, timeoutMs: number) {
    super('LOCK_TIMEOUT', `lock on ${key.index}/${key.id} not acquired within ${timeoutMs} ms`, {
      meta: { index: key.index, id: key.id, timeoutMs },
    });
  }
}

/** ZooKeeper is unreachable, or the session ended while waiting. */
export class LockUnavailableError extends ProxyError {
  constructor(message: string, options: { cause?: unknown; meta?: Record<string, unknown> } = {}) {
    super('LOCK_UNAVAILABLE', message, options);
  }
}

/** The reason a held lock's `lost` signal aborts with. */
export class LockLostError extends ProxyError {
  constructor(key: LockKey, reason: string) {
    super('LOCK_LOST', `lock on ${key.index}/${key.id} lost: ${reason}`, { meta: { index: key.index, id: key.id, reason } });
  }
}
