import { inject } from 'vitest';
import type { WriteStackLocks } from './write-stack.js';

/** One way the proxy can hold its document locks, for tests that must hold on both. */
export interface LockBackend {
  /** `zookeeper` or `in-process`, as `proxy.lock.service` names them (also the test title suffix). */
  readonly name: 'zookeeper' | 'in-process';
  /** The `startWriteStack` options selecting it (read lazily: `inject` needs a running test file). */
  stackLocks(): WriteStackLocks;
  /** The properties a proxy process needs for it (`startProxyProcess`). */
  processProperties(lockRoot: string): Record<string, string>;
}

export const ZOOKEEPER_LOCKS: LockBackend = {
  name: 'zookeeper',
  stackLocks: () => ({ zookeeper: inject('zookeeperConnect') }),
  processProperties: (lockRoot) => ({
    'zookeeper.servers': inject('zookeeperConnect'),
    'zookeeper.lock.root': lockRoot,
    'zookeeper.session.timeout': '4000',
  }),
};

export const IN_PROCESS_LOCKS: LockBackend = {
  name: 'in-process',
  stackLocks: () => ({ lockService: 'in-process' }),
  processProperties: () => ({ 'proxy.lock.service': 'in-process' }),
};

/**
 * Every write-path test that does not test ZooKeeper itself runs on both (`describe.each`): the
 * single-instance mode promises the same priorities, timeouts, retries and dead letters.
 */
export const LOCK_BACKENDS: readonly LockBackend[] = [ZOOKEEPER_LOCKS, IN_PROCESS_LOCKS];
