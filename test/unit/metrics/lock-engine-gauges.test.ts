import { describe, expect, it } from 'vitest';
import { MemoryLockEngine } from '../../../src/lock/memory/memory-lock-engine.js';
import { ProxyMetrics } from '../../../src/metrics/proxy-metrics.js';
import { attachLockEngine, lockEventsOf } from '../../../src/observe/attach-lock-engine.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { ScriptedLockEngine } from './scripted-lock-engine.js';

const P = 'es_lock_proxy_';
const OWNER = { host: 'test', pid: 1, requestId: 'r' };
const REQUEST = { timeoutMs: 1000, owner: OWNER };

async function gauge(metrics: ProxyMetrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  return sampleValue(parsePrometheusText((await metrics.render()).body), `${P}${name}`, labels);
}

describe('lock waiters and locks held', () => {
  it('read the engine\'s activity at scrape time', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const engine = new MemoryLockEngine({ events: lockEventsOf(metrics.observer) });
    const stop = attachLockEngine(engine, metrics.observer);
    const key = { index: 'i', id: '1' };
    const first = await engine.acquire(key, 'foreground', REQUEST);
    const second = engine.acquire(key, 'background', REQUEST);
    expect(await gauge(metrics, 'locks_held')).toBe(1);
    expect(await gauge(metrics, 'lock_waiters')).toBe(1);
    await first.release();
    const next = await second;
    expect(await gauge(metrics, 'locks_held')).toBe(1);
    expect(await gauge(metrics, 'lock_waiters')).toBe(0);
    await Promise.all([next.release(), next.release()]);
    expect(await gauge(metrics, 'locks_held')).toBe(0);
    stop();
    await engine.close();
  });

  it('count a bulk\'s keys one by one', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const engine = new MemoryLockEngine();
    attachLockEngine(engine, metrics.observer);
    const keys = ['a', 'b', 'c'].map((id) => ({ index: 'i', id }));
    const held = await engine.acquire(keys[2]!, 'foreground', REQUEST);
    const granted: { release: () => Promise<void> }[] = [];
    const each = engine.acquireEach(keys, 'background', { ...REQUEST, onGranted: (lock) => granted.push(lock) });
    expect(await gauge(metrics, 'locks_held')).toBe(3);
    expect(await gauge(metrics, 'lock_waiters')).toBe(1);
    await held.release();
    await each;
    await Promise.all(granted.map((lock) => lock.release()));
    expect(await gauge(metrics, 'locks_held')).toBe(0);
    expect(await gauge(metrics, 'lock_waiters')).toBe(0);
  });
});

describe('lock service state', () => {
  it('shows the current state one-hot until detached', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const scripted = new ScriptedLockEngine();
    const stop = attachLockEngine(scripted, metrics.observer);
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'connecting' })).toBe(1);
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'connected' })).toBe(0);
    for (const state of ['connected', 'suspended', 'unavailable', 'connecting'] as const) scripted.setState(state);
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'connecting' })).toBe(1);
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'unavailable' })).toBe(0);
    scripted.current = { held: 2, waiting: 5 };
    expect(await gauge(metrics, 'lock_waiters')).toBe(5);
    stop();
    scripted.setState('connected');
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'connected' })).toBe(0);
  });

  it('counts the session expiries the engine reports through its events', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const events = lockEventsOf(metrics.observer);
    expect(await gauge(metrics, 'zookeeper_session_expiries_total')).toBe(0);
    events.sessionExpired();
    events.sessionExpired();
    expect(await gauge(metrics, 'zookeeper_session_expiries_total')).toBe(2);
  });

  it('counts the orphaned lock nodes the engine reports removed', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const events = lockEventsOf(metrics.observer);
    expect(await gauge(metrics, 'orphaned_locks_removed_total')).toBe(0);
    events.orphansRemoved(2);
    events.orphansRemoved(1);
    expect(await gauge(metrics, 'orphaned_locks_removed_total')).toBe(3);
  });

  it('counts the batch transactions ZooKeeper refused, by the first failing operation\'s error', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const events = lockEventsOf(metrics.observer);
    events.batchRefused({ code: 'NONODE' });
    events.batchRefused({ code: 'NODEEXISTS' });
    events.batchRefused({ code: 'NONODE' });
    expect(await gauge(metrics, 'zookeeper_batch_refused_total', { code: 'NONODE' })).toBe(2);
    expect(await gauge(metrics, 'zookeeper_batch_refused_total', { code: 'NODEEXISTS' })).toBe(1);
  });
});
