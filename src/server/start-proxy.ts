import { createServer, type ServerOptions } from 'node:http';
import type { Router } from 'express';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import { createAdminApp } from '../http/admin-app.js';
import { createProxyHandler } from '../http/proxy-handler.js';
import { lockEngineCheck, Readiness, upstreamCheck, type ReadinessCheck } from '../http/readiness.js';
import { createUpstreamForwarder } from '../elasticsearch/forwarder/create-upstream-forwarder.js';
import type { UpstreamForwarder } from '../elasticsearch/upstream-forwarder.js';
import type { WriteInterceptor } from '../http/write-interceptor.js';
import type { LockEngine } from '../lock/lock-engine.js';
import { NO_OBSERVER, type ProxyObserver } from '../observe/proxy-observer.js';
import { answerClientError } from './client-error.js';
import { InFlightRequests } from './in-flight-requests.js';
import { proxyCredentials } from './proxy-credentials.js';
import { closeServer, listen, type BoundAddress } from './listen.js';
import { createProxyListener, type EdgeServer, type ProxyListener } from './proxy-listener.js';

export type { BoundAddress } from './listen.js';

export interface ProxyServices {
  readonly forwarder: UpstreamForwarder;
  readonly readiness: Readiness;
}

export interface StartProxyDeps {
  /** When given, `/readyz` also requires its state to be `connected`. Closed by its owner, not here. */
  readonly lockEngine?: LockEngine;
  /** The write path's hook. */
  readonly writeInterceptor?: WriteInterceptor;
  /** Alternative to `writeInterceptor`: built from the forwarder the proxy created (one upstream pool). */
  readonly createWriteInterceptor?: (services: ProxyServices) => WriteInterceptor;
  /** Replaces the node:http forwarder (tests). Closed by `close()` all the same. */
  readonly forwarder?: UpstreamForwarder;
  /** Extra `/readyz` checks (more can be added later through `readiness.add`). */
  readonly readinessChecks?: readonly ReadinessCheck[];
  /** Idle time allowed in the middle of a request body before a 408 (default 30 s). */
  readonly bodyIdleTimeoutMs?: number;
  /** Time allowed to receive a request head before a 408 (default: Node's 60 s). */
  readonly headersTimeoutMs?: number;
  /** Extra admin-port routes (lock inspection, metrics), mounted after /healthz and /readyz. */
  readonly adminRouters?: readonly Router[];
  /** Told of requests served and upstream failures (the forwarder created here reports to it). */
  readonly observer?: ProxyObserver;
}

export interface RunningProxy extends ProxyServices {
  readonly proxyAddress: BoundAddress;
  readonly adminAddress: BoundAddress;
  /** `https` when `proxy.listen.tls.cert`/`.key` are set. */
  readonly proxyScheme: 'http' | 'https';
  /** Re-reads the proxy port's certificate files for new connections (logs and keeps the served one if they cannot be served). */
  reloadCertificate(): void;
  /** Stops accepting, lets in-flight requests finish (up to `proxy.shutdownTimeoutMs`), closes upstream sockets. */
  close(): Promise<void>;
}

/** Binds the proxy port and the admin port; resolves once both listen. Port 0 picks a free port. */
export async function startProxy(settings: Settings, logger: Logger, deps: StartProxyDeps = {}): Promise<RunningProxy> {
  const observer = deps.observer ?? NO_OBSERVER;
  const forwarder =
    deps.forwarder ??
    createUpstreamForwarder(settings, {
      logger: logger.child({ component: 'upstream' }),
      failures: observer,
      ...(deps.bodyIdleTimeoutMs !== undefined ? { clientIdleMs: deps.bodyIdleTimeoutMs } : {}),
    });
  const readiness = new Readiness([
    upstreamCheck(forwarder, { authorization: proxyCredentials(settings.elasticsearch.auth) }),
    ...(deps.lockEngine !== undefined ? [lockEngineCheck(deps.lockEngine)] : []),
    ...(deps.readinessChecks ?? []),
  ]);
  const services: ProxyServices = { forwarder, readiness };
  const writeInterceptor = deps.writeInterceptor ?? deps.createWriteInterceptor?.(services);
  const inFlight = new InFlightRequests();

  const handler = createProxyHandler({
    forwarder,
    logger: logger.child({ component: 'proxy' }),
    maxBodyBytes: settings.proxy.maxBodyBytes,
    inFlight,
    events: observer,
    ...(deps.bodyIdleTimeoutMs !== undefined ? { bodyIdleTimeoutMs: deps.bodyIdleTimeoutMs } : {}),
    ...(writeInterceptor !== undefined ? { writeInterceptor } : {}),
  });
  let proxyListener: ProxyListener;
  try {
    proxyListener = createProxyListener(settings.proxy.listenTls, edgeServerOptions(deps.headersTimeoutMs), handler, logger.child({ component: 'listener' }));
  } catch (error) {
    // Certificate files replaced by unusable ones since the settings were checked.
    await forwarder.close();
    throw error;
  }
  const proxyServer = proxyListener.server;
  proxyServer.on('clientError', answerClientError);
  const adminServer = createServer(createAdminApp({ readiness, logger: logger.child({ component: 'admin' }), routers: deps.adminRouters ?? [] }));

  const started: EdgeServer[] = [];
  try {
    const proxyAddress = await listen(proxyServer, settings.proxy.listenHost, settings.proxy.listenPort);
    started.push(proxyServer);
    const adminAddress = await listen(adminServer, settings.proxy.adminHost, settings.proxy.adminPort);
    started.push(adminServer);
    let closing: Promise<void> | null = null;
    return {
      proxyAddress,
      adminAddress,
      proxyScheme: proxyListener.scheme,
      reloadCertificate: proxyListener.reloadCertificate,
      forwarder,
      readiness,
      close: () => (closing ??= shutDown({ proxyServer, adminServer, inFlight, forwarder, timeoutMs: settings.proxy.shutdownTimeoutMs, logger })),
    };
  } catch (error) {
    await Promise.all(started.map((server) => closeServer(server)));
    await forwarder.close();
    throw error;
  }
}

/**
 * How long an idle client connection is kept. Node's default (5 s) is shorter than what many
 * clients assume, and a server closing an idle keep-alive socket races a client sending on it:
 * the request dies with "other side closed" (seen in the soak test). Elasticsearch keeps idle
 * HTTP connections open, so the proxy outlasts the clients' own idle timeouts instead.
 */
export const CLIENT_KEEP_ALIVE_MS = 75_000;

/**
 * Node enforces `headersTimeout` only when it sweeps connections (every 30 s by default), so a
 * shorter timeout comes with a sweep interval to match.
 */
function edgeServerOptions(headersTimeoutMs: number | undefined): ServerOptions {
  const keepAlive = { keepAliveTimeout: CLIENT_KEEP_ALIVE_MS };
  if (headersTimeoutMs === undefined) return keepAlive;
  return { ...keepAlive, headersTimeout: headersTimeoutMs, connectionsCheckingInterval: Math.max(10, Math.floor(headersTimeoutMs / 4)) };
}

async function shutDown(parts: {
  proxyServer: EdgeServer;
  adminServer: EdgeServer;
  inFlight: InFlightRequests;
  forwarder: UpstreamForwarder;
  timeoutMs: number;
  logger: Logger;
}): Promise<void> {
  const { proxyServer, adminServer, inFlight, forwarder, timeoutMs, logger } = parts;
  const proxyClosed = closeServer(proxyServer);
  proxyServer.closeIdleConnections();
  const drained = await inFlight.idle(timeoutMs);
  if (!drained) logger.warn({ inFlight: inFlight.count, timeoutMs }, 'shutdown timeout: cutting the remaining requests');
  proxyServer.closeAllConnections();
  adminServer.closeAllConnections();
  await Promise.all([proxyClosed, closeServer(adminServer)]);
  await forwarder.close();
}
