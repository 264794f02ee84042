import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { MemoryLockEngine } from '../../src/lock/memory/memory-lock-engine.js';
import { startProxyRuntime, type ProxyRuntime } from '../../src/server/proxy-runtime.js';
import { startEsStandIn, type EsStandIn, type EsStandInOptions } from './es-stand-in.js';
import { testSettings, type TestSettingsOverrides } from './test-settings.js';

export interface WriteStack {
  readonly standIn: EsStandIn;
  /** Proxy instances, each with its own ZooKeeper session, sharing one lock root. */
  readonly proxies: readonly ProxyRuntime[];
  /** `http://127.0.0.1:<port>` of each proxy. */
  readonly urls: readonly string[];
  readonly adminUrls: readonly string[];
  readonly lockRoot: string;
  readonly deadLetterDir: string;
  close(): Promise<void>;
}

export interface WriteStackOptions {
  readonly zookeeper: string;
  readonly proxies?: number;
  readonly settings?: TestSettingsOverrides;
  readonly standIn?: EsStandInOptions;
  readonly logger?: Logger;
  /** `memory`: the in-process engine (one proxy only), for write-path tests on both engines. */
  readonly locks?: 'zookeeper' | 'memory';
}

/**
 * The product as users run it: N proxies (real ZooKeeper locks, the write path) in front of one
 * Elasticsearch stand-in whose overlap detector is the serialization oracle. A fresh lock root
 * and dead-letter directory per stack keep tests independent.
 */
export async function startWriteStack(options: WriteStackOptions): Promise<WriteStack> {
  const standIn = await startEsStandIn(options.standIn);
  const deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-dlq-'));
  const lockRoot = `/test-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const settings = testSettings({
    ...options.settings,
    zookeeper: { servers: options.zookeeper, lockRoot, sessionTimeoutMs: 4000, ...options.settings?.zookeeper },
    elasticsearch: { ...options.settings?.elasticsearch, hosts: [standIn.url] },
    proxy: { deadLetterDir, ...options.settings?.proxy },
  });
  const proxies: ProxyRuntime[] = [];
  try {
    for (let i = 0; i < (options.proxies ?? 1); i++) {
      const lockEngine = options.locks === 'memory' ? { lockEngine: new MemoryLockEngine() } : {};
      const runtime = await startProxyRuntime(settings, options.logger ?? pino({ level: 'silent' }), lockEngine);
      proxies.push(runtime);
      await waitForLockService(runtime);
    }
  } catch (error) {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await standIn.stop();
    throw error;
  }
  return {
    standIn,
    proxies,
    urls: proxies.map((proxy) => `http://127.0.0.1:${proxy.proxyAddress.port}`),
    adminUrls: proxies.map((proxy) => `http://127.0.0.1:${proxy.adminAddress.port}`),
    lockRoot,
    deadLetterDir,
    close: async () => {
      await Promise.all(proxies.map((proxy) => proxy.close()));
      await standIn.stop();
      await rm(deadLetterDir, { recursive: true, force: true });
    },
  };
}

/** Resolves once the proxy's ZooKeeper session is connected. */
export function waitForLockService(runtime: ProxyRuntime): Promise<void> {
  return new Promise((resolve) => {
    if (runtime.locks.state() === 'connected') {
      resolve();
      return;
    }
    const stop = runtime.locks.onStateChange((state) => {
      if (state !== 'connected') return;
      stop();
      resolve();
    });
  });
}

/** Polls `condition` until it holds (for states only observable by asking, like a ZooKeeper queue). */
export async function eventually<T>(condition: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
