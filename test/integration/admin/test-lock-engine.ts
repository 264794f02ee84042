import { pino } from 'pino';
import { inject } from 'vitest';
import type { LockEngine } from '../../../src/lock/lock-engine.js';
import { ZooKeeperLockEngine } from '../../../src/lock/zookeeper/zookeeper-lock-engine.js';
import { testSettings } from '../../support/test-settings.js';

// One lock root per test file run: engines of this file share it, other runs never see it.
const LOCK_ROOT = `/admin-it-${process.pid}-${Date.now()}`;

/**
 * A ZooKeeper lock engine on the run's real ZooKeeper, connected. Every call gives another
 * engine (another session) on the same lock root, as a second proxy instance would have.
 */
export async function startTestLockEngine(): Promise<LockEngine> {
  const settings = testSettings({ zookeeper: { servers: inject('zookeeperConnect'), lockRoot: LOCK_ROOT } });
  const engine = new ZooKeeperLockEngine(settings.zookeeper, pino({ level: 'silent' }));
  try {
    await connected(engine, 10_000);
  } catch (error) {
    await engine.close();
    throw error;
  }
  return engine;
}

function connected(engine: LockEngine, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    if (engine.state() === 'connected') {
      resolve();
      return;
    }
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`lock engine not connected within ${timeoutMs} ms (state ${engine.state()})`));
    }, timeoutMs);
    const stop = engine.onStateChange((state) => {
      if (state !== 'connected') return;
      clearTimeout(timer);
      stop();
      resolve();
    });
  });
}
