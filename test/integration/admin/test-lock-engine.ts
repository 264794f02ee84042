import { pino } from 'pino';
import { inject } from 'vitest';
import type { LockEngine } from '../../../src/lock/lock-engine.js';
import { MemoryLockEngine } from '../../../src/lock/memory/memory-lock-engine.js';
import { ZooKeeperLockEngine } from '../../../src/lock/zookeeper/zookeeper-lock-engine.js';
import type { LockBackend } from '../../support/lock-backends.js';
import { borrowedEngine } from '../../support/write-stack.js';
import { testSettings } from '../../support/test-settings.js';

// One lock root per test file run: engines of this file share it, other runs never see it.
const LOCK_ROOT = `/admin-it-${process.pid}-${Date.now()}`;

/**
 * The engine a proxy and "another proxy" use for the admin routes: with ZooKeeper two sessions on
 * one lock root (two instances); in-process, one engine and a borrowed view of it (the only
 * instance there is, seen from two requests).
 */
export async function startTestLockEngines(backend: LockBackend): Promise<{ engine: LockEngine; otherEngine: LockEngine }> {
  if (backend.name === 'in-process') {
    const engine = new MemoryLockEngine();
    return { engine, otherEngine: borrowedEngine(engine) };
  }
  const engine = await startTestLockEngine();
  try {
    return { engine, otherEngine: await startTestLockEngine() };
  } catch (error) {
    await engine.close();
    throw error;
  }
}

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
