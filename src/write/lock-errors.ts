import type { LockKey } from '../lock/lock-engine.js';
import { ProxyError } from '../errors/proxy-error.js';

/** Keys render as Elasticsearch prints documents: `[index][id]`. */
export function describeKey(key: LockKey): string {
  return `[${key.index}][${key.id}]`;
}

export function lockWaitTimeout(key: LockKey, waitedMs: number): ProxyError {
  return new ProxyError('LOCK_TIMEOUT', `lock wait for document ${describeKey(key)} timed out after ${waitedMs}ms`, {
    meta: { index: key.index, id: key.id, waitedMs },
  });
}

export function lockLostBeforeForwarding(key: LockKey): ProxyError {
  return new ProxyError(
    'LOCK_LOST',
    `lock on document ${describeKey(key)} was lost before the write was forwarded; nothing was sent to Elasticsearch`,
    { meta: { index: key.index, id: key.id } },
  );
}

/**
 * At the moment the request was to be handed to the upstream socket the engine could not vouch for
 * the lock: lost, or its ZooKeeper link suspended right then. Nothing was sent; a replay is safe.
 */
export function lockNotUsableAtHandOver(key: LockKey): ProxyError {
  return new ProxyError(
    'LOCK_LOST',
    `lock on document ${describeKey(key)} could not be vouched for when the write was to be sent (lost, or the ZooKeeper link suspended); nothing was sent to Elasticsearch`,
    { meta: { index: key.index, id: key.id } },
  );
}

/** Seconds a client should wait before retrying after a lock wait timeout (at least 1). */
export function retryAfterSeconds(timeoutMs: number): number {
  return Math.max(1, Math.ceil(timeoutMs / 1000));
}

export function isLockTimeout(error: unknown): error is ProxyError {
  return error instanceof ProxyError && error.code === 'LOCK_TIMEOUT';
}
