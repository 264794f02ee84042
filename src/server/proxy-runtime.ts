import type { Logger } from 'pino';
import { applyLiveChanges } from '../config/live-settings.js';
import type { ReloadDiff } from '../config/reloadable-diff.js';
import type { Settings } from '../config/settings.js';
import { liveLogLevel } from '../logging/live-log-level.js';
import { createClusterClient } from '../elasticsearch/cluster-client.js';
import { openDeadLetterStore } from '../deadletter/open-dead-letter-store.js';
import { lockInspectionRouter } from '../http/admin/lock-inspection-router.js';
import { metricsRouter } from '../http/admin/metrics-router.js';
import { createUpstreamForwarder } from '../elasticsearch/forwarder/create-upstream-forwarder.js';
import type { LockEngine } from '../lock/lock-engine.js';
import { openLockEngine } from '../lock/open-lock-engine.js';
import { ProxyMetrics } from '../metrics/proxy-metrics.js';
import { clusterAliasLookup } from '../write/alias-lookup.js';
import { ALIAS_LOOKUP_CONCURRENCY, AliasResolver } from '../write/alias-resolver.js';
import { attachLockEngine, lockEventsOf } from '../observe/attach-lock-engine.js';
import { combineObservers, observer as partialObserver, type ProxyObserver } from '../observe/proxy-observer.js';
import { loggingObserver } from '../write/write-observer.js';
import { createWriteInterceptor } from '../http/write-edge.js';
import { FenceReader } from '../write/fencing/fence-reader.js';
import { createAuthGate } from '../auth/auth-gate.js';
import { PrincipalMetrics } from '../auth/principal-metrics.js';
import { proxyCredentials } from './proxy-credentials.js';
import { startProxy, type BoundAddress, type StartProxyDeps } from './start-proxy.js';

export interface ProxyRuntime {
  readonly proxyAddress: BoundAddress;
  readonly adminAddress: BoundAddress;
  /** `https` when the proxy port has a certificate (`proxy.listen.tls.*`). */
  readonly proxyScheme: 'http' | 'https';
  readonly locks: LockEngine;
  readonly metrics: ProxyMetrics;
  /** The settings in force for new requests. */
  settings(): Settings;
  /**
   * Takes a freshly loaded configuration: live keys apply to the next request, keys that need a
   * restart are reported and left as they run. The proxy port's certificate files are re-read
   * (same paths) for new connections.
   */
  reload(next: Settings): ReloadDiff;
  /** Stops accepting, drains in-flight requests, releases every lock, closes the ZooKeeper session. */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** An engine the caller owns the choice of (tests: several proxies sharing one); default: `proxy.lock.service`. */
  readonly lockEngine?: LockEngine;
  readonly metrics?: ProxyMetrics;
  /** Also told everything the metrics are told (e.g. a benchmark's probe). */
  readonly observer?: ProxyObserver;
  /** Client-side time limits of the HTTP edge (defaults: 30 s body idle, 60 s request head). */
  readonly edge?: Pick<StartProxyDeps, 'bodyIdleTimeoutMs' | 'headersTimeoutMs'>;
}

/** Assembles the product: the lock engine, the write path, metrics and admin routes around the HTTP edge. */
export async function startProxyRuntime(initial: Settings, logger: Logger, options: RuntimeOptions = {}): Promise<ProxyRuntime> {
  let current = initial;
  let draining = false;
  const settings = (): Settings => current;
  const setLogLevel = liveLogLevel(logger);
  const metrics = options.metrics ?? new ProxyMetrics();
  const writeLogger = logger.child({ component: 'write' });
  const principalMetrics = new PrincipalMetrics(metrics.registry);
  // The one place where metrics and logging are attached: every part reports to this observer.
  const observer = combineObservers(
    metrics.observer,
    partialObserver(loggingObserver(writeLogger, () => current.proxy.slowLockMs)),
    partialObserver({ lockedRequest: (report) => principalMetrics.lockedRequest(report) }),
    ...(options.observer !== undefined ? [options.observer] : []),
  );
  const engine = options.lockEngine ?? (await openLockEngine(initial, logger, lockEventsOf(observer)));
  const stopWatching = attachLockEngine(engine, observer);
  const cluster = createClusterClient(initial.elasticsearch, initial.proxy.upstreamTimeoutMs);
  const forwarder = createUpstreamForwarder(initial, {
    logger: logger.child({ component: 'upstream' }),
    failures: observer,
    ...(options.edge?.bodyIdleTimeoutMs !== undefined ? { clientIdleMs: options.edge.bodyIdleTimeoutMs } : {}),
  });
  const authGate = createAuthGate({ settings, forwarder, metrics: principalMetrics, logger: logger.child({ component: 'auth' }) });
  // What the runtime opened beside the HTTP edge: released the same way on close and on a failed start.
  const closeShared = async (): Promise<void> => {
    stopWatching();
    await engine.close();
    await cluster.close();
  };
  try {
    const proxy = await startProxy(initial, logger, {
      ...options.edge,
      lockEngine: engine,
      forwarder,
      observer,
      writeInterceptor: createWriteInterceptor({
        settings,
        locks: engine,
        forwarder,
        aliases: new AliasResolver({
          lookup: clusterAliasLookup(cluster),
          ttlMs: () => current.proxy.aliasCacheTtlMs,
          capacity: initial.proxy.aliasCacheSize,
          concurrency: ALIAS_LOOKUP_CONCURRENCY,
        }),
        deadLetters: openDeadLetterStore(initial, { cluster, logger: logger.child({ component: 'deadletter' }) }),
        observer,
        logger: writeLogger,
        fenceReader: new FenceReader(forwarder, proxyCredentials(initial.elasticsearch.auth)),
      }, authGate),
      readinessChecks: [{ name: 'draining', check: async () => (draining ? 'shutting down: draining in-flight requests' : null) }],
      adminRouters: [
        metricsRouter(metrics),
        lockInspectionRouter({ locks: engine, adminToken: () => current.proxy.adminToken, logger: logger.child({ component: 'admin' }) }),
      ],
    });
    authGate.detectSecurity();
    return {
      proxyAddress: proxy.proxyAddress,
      adminAddress: proxy.adminAddress,
      proxyScheme: proxy.proxyScheme,
      locks: engine,
      metrics,
      settings,
      reload: (next) => {
        const update = applyLiveChanges(current, next);
        current = update.settings;
        setLogLevel(current.proxy.logLevel);
        proxy.reloadCertificate();
        authGate.detectSecurity();
        return update.diff;
      },
      close: async () => {
        draining = true;
        authGate.stop();
        await proxy.close();
        await closeShared();
      },
    };
  } catch (error) {
    await closeShared();
    throw error;
  }
}
