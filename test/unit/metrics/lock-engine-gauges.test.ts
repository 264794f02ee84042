import { describe, expect, it } from 'vitest';
import { attachLockEngine } from '../../../src/observe/attach-lock-engine.js';
import { ProxyMetrics } from '../../../src/metrics/proxy-metrics.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { ScriptedLockEngine } from './scripted-lock-engine.js';

const P = 'es_lock_proxy_';
const OWNER = { host: 'test', pid: 1, requestId: 'r' };
const OPTIONS = { timeoutMs: 1000, owner: OWNER };

async function gauge(metrics: ProxyMetrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  return sampleValue(parsePrometheusText((await metrics.render()).body), `${P}${name}`, labels);
}

describe('lock waiters and locks held', () => {
  it('counts a waiter until its acquire settles and a lock until its release settles, once', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const scripted = new ScriptedLockEngine();
    const { engine } = attachLockEngine(scripted, metrics.observer);
    const first = engine.acquire({ index: 'i', id: '1' }, 'foreground', OPTIONS);
    const second = engine.acquire({ index: 'i', id: '2' }, 'background', OPTIONS);
    expect(await gauge(metrics, 'lock_waiters')).toBe(2);
    scripted.pending[0]?.grant();
    const lock = await first;
    expect(await gauge(metrics, 'lock_waiters')).toBe(1);
    expect(await gauge(metrics, 'locks_held')).toBe(1);
    scripted.pending[1]?.refuse(new Error('timed out'));
    await expect(second).rejects.toThrow('timed out');
    expect(await gauge(metrics, 'lock_waiters')).toBe(0);
    await Promise.all([lock.release(), lock.release()]);
    await lock.release();
    expect(await gauge(metrics, 'locks_held')).toBe(0);
    expect(scripted.releases).toEqual([{ index: 'i', id: '1' }]);
  });

  it('counts every lock of acquireMany and settles them on releaseAll or close', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const scripted = new ScriptedLockEngine();
    const { engine } = attachLockEngine(scripted, metrics.observer);
    const keys = [
      { index: 'i', id: 'a' },
      { index: 'i', id: 'b' },
      { index: 'i', id: 'c' },
    ];
    const many = engine.acquireMany(keys, 'background', OPTIONS);
    expect(await gauge(metrics, 'lock_waiters')).toBe(1);
    scripted.pending[0]?.grant();
    const result = await many;
    expect(await gauge(metrics, 'locks_held')).toBe(3);
    await result.acquired[0]?.release();
    expect(await gauge(metrics, 'locks_held')).toBe(2);
    await result.releaseAll();
    expect(await gauge(metrics, 'locks_held')).toBe(0);

    const single = engine.acquire({ index: 'i', id: 'd' }, 'foreground', OPTIONS);
    scripted.pending[1]?.grant();
    await single;
    expect(await gauge(metrics, 'locks_held')).toBe(1);
    await engine.close();
    expect(await gauge(metrics, 'locks_held')).toBe(0);
  });
});

describe('lock service state', () => {
  it('shows the current state one-hot and infers expiries from a fall into unavailable', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const scripted = new ScriptedLockEngine();
    const { detach: stop } = attachLockEngine(scripted, metrics.observer);
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'connecting' })).toBe(1);
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'connected' })).toBe(0);
    scripted.setState('unavailable');
    // Never connected: an unreachable ensemble is not an expired session.
    expect(await gauge(metrics, 'zookeeper_session_expiries_total')).toBe(0);
    for (const state of ['connected', 'suspended', 'unavailable', 'unavailable', 'connecting'] as const) scripted.setState(state);
    expect(await gauge(metrics, 'zookeeper_session_expiries_total')).toBe(1);
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'connecting' })).toBe(1);
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'unavailable' })).toBe(0);
    stop();
    scripted.setState('connected');
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'connected' })).toBe(0);
  });

  it('counts expiries from the engine when it reports them itself', async () => {
    const metrics = new ProxyMetrics({ processMetrics: false });
    const scripted = new ScriptedLockEngine();
    const expiryListeners = new Set<() => void>();
    const engine = Object.assign(scripted, {
      onSessionExpired(listener: () => void): () => void {
        expiryListeners.add(listener);
        return () => expiryListeners.delete(listener);
      },
    });
    const { detach: stop } = attachLockEngine(engine, metrics.observer);
    scripted.setState('connected');
    scripted.setState('unavailable');
    expect(await gauge(metrics, 'zookeeper_session_expiries_total')).toBe(0);
    for (const listener of expiryListeners) listener();
    expect(await gauge(metrics, 'zookeeper_session_expiries_total')).toBe(1);
    expect(await gauge(metrics, 'zookeeper_connection_state', { state: 'unavailable' })).toBe(1);
    stop();
    expect(expiryListeners.size).toBe(0);
  });
});
