import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import type { LockEngine } from './lock-engine.js';
import type { LockEvents } from './lock-events.js';
import { MemoryLockEngine } from './memory/memory-lock-engine.js';

export const IN_PROCESS_WARNING =
  'proxy.lock.service=in-process: document locks hold within this process only; run exactly one proxy instance in front of the cluster';

/**
 * The lock engine the settings ask for. The ZooKeeper engine is imported here and only here, on
 * demand: its module graph loads the native `zookeeper` binding, which a single instance with
 * in-process locks must neither need installed nor load.
 */
export async function openLockEngine(settings: Settings, logger: Logger, events: LockEvents): Promise<LockEngine> {
  if (settings.proxy.lockService === 'in-process') {
    logger.warn({ lockService: 'in-process' }, IN_PROCESS_WARNING);
    return new MemoryLockEngine({ events });
  }
  const { ZooKeeperLockEngine } = await import('./zookeeper/zookeeper-lock-engine.js');
  return new ZooKeeperLockEngine(settings.zookeeper, logger.child({ component: 'lock' }), { events });
}
