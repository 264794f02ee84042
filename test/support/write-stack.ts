import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import type { LockEngine } from '../../src/lock/lock-engine.js';
import { startProxyRuntime, type ProxyRuntime, type RuntimeOptions } from '../../src/server/proxy-runtime.js';
import { startEsStandIn, type EsStandIn, type EsStandInOptions } from './es-stand-in.js';
import { testSettings, type TestSettingsOverrides } from './test-settings.js';

export interface WriteStack {
  readonly standIn: EsStandIn;
  /**
   * Proxy instances sharing one lock service: with ZooKeeper each has its own session on one lock
   * root; with in-process locks the first opens the engine from its settings, as the product does,
   * and the others use that same engine (front-ends of one process).
   */
  readonly proxies: readonly ProxyRuntime[];
  /** `http://127.0.0.1:<port>` of each proxy. */
  readonly urls: readonly string[];
  readonly adminUrls: readonly string[];
  readonly lockRoot: string;
  readonly deadLetterDir: string;
  close(): Promise<void>;
}

/** Which lock service the stack's proxies use: a ZooKeeper connect string, or in-process locks. */
export type WriteStackLocks =
  | { readonly zookeeper: string; readonly lockService?: 'zookeeper' }
  | { readonly lockService: 'in-process'; readonly zookeeper?: undefined };

export type WriteStackOptions = WriteStackLocks & {
  readonly proxies?: number;
  /** Each proxy's own ZooKeeper connect string (e.g. its own relay), in place of `zookeeper`. */
  readonly zookeeperPerProxy?: readonly string[];
  readonly settings?: TestSettingsOverrides;
  readonly standIn?: EsStandInOptions;
  readonly logger?: Logger;
  /** What the proxies reach as Elasticsearch, in front of the stand-in (a misbehaving relay); default: the stand-in. */
  readonly upstream?: (standIn: EsStandIn) => Promise<string>;
  /** Client-side time limits of each proxy's HTTP edge (default: the product's). */
  readonly edge?: RuntimeOptions['edge'];
};

/**
 * The product as users run it: N proxies (real locks, the write path) in front of one
 * Elasticsearch stand-in whose overlap detector is the serialization oracle. A fresh lock root
 * and dead-letter directory per stack keep tests independent.
 */
export async function startWriteStack(options: WriteStackOptions): Promise<WriteStack> {
  const standIn = await startEsStandIn(options.standIn);
  const deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-dlq-'));
  const lockRoot = `/test-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const inProcess = options.lockService === 'in-process';
  const settings = testSettings({
    ...options.settings,
    zookeeper: { servers: options.zookeeper ?? '127.0.0.1:1', lockRoot, sessionTimeoutMs: 4000, ...options.settings?.zookeeper },
    elasticsearch: { ...options.settings?.elasticsearch, hosts: [options.upstream === undefined ? standIn.url : await options.upstream(standIn)] },
    proxy: { deadLetterDir, ...options.settings?.proxy, lockService: inProcess ? 'in-process' : 'zookeeper' },
  });
  const proxies: ProxyRuntime[] = [];
  const logger = options.logger ?? pino({ level: 'silent' });
  try {
    for (let i = 0; i < (options.proxies ?? 1); i++) {
      const shared = inProcess && proxies[0] !== undefined ? { lockEngine: borrowedEngine(proxies[0].locks) } : {};
      const servers = options.zookeeperPerProxy?.[i];
      const own = servers === undefined ? settings : { ...settings, zookeeper: { ...settings.zookeeper, servers } };
      const runtime = await startProxyRuntime(own, logger, { ...shared, ...(options.edge !== undefined ? { edge: options.edge } : {}) });
      proxies.push(runtime);
      await waitForLockService(runtime);
    }
  } catch (error) {
    await closeAll(proxies);
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
      await closeAll(proxies);
      await standIn.stop();
      await rm(deadLetterDir, { recursive: true, force: true });
    },
  };
}

/** The first proxy owns a shared in-process engine: it closes last. */
async function closeAll(proxies: readonly ProxyRuntime[]): Promise<void> {
  const [owner, ...others] = proxies;
  await Promise.all(others.map((proxy) => proxy.close()));
  await owner?.close();
}

/**
 * Another proxy's engine, lent: every member is the engine's own except `close`, which the owner
 * alone may call. A Proxy rather than a wrapper class keeps it independent of the engine contract.
 */
export function borrowedEngine(engine: LockEngine): LockEngine {
  return new Proxy(engine, {
    get(target, property) {
      if (property === 'close') return async () => {};
      const member: unknown = Reflect.get(target, property, target);
      return typeof member === 'function' ? member.bind(target) : member;
    },
  });
}

/** Resolves once the proxy's lock service is connected (at once for in-process locks). */
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
