import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { ProxyError } from '../errors/proxy-error.js';
import { clientGoneSignal } from './client-gone.js';
import { asProxyError, sendElasticsearchError } from './elasticsearch-error.js';
import { readRequestBody } from './request-body.js';
import type { UpstreamForwarder } from './upstream-forwarder.js';
import type { InterceptedRequest, WriteInterceptor } from './write-interceptor.js';

export interface ProxyAppDeps {
  readonly forwarder: UpstreamForwarder;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
  /** Default: `readRequestBody`'s own (`DEFAULT_BODY_IDLE_TIMEOUT_MS`). */
  readonly bodyIdleTimeoutMs?: number;
  readonly writeInterceptor?: WriteInterceptor;
  /** Told when a request starts and when it is completely over (for graceful shutdown). */
  readonly inFlight?: { start(): void; end(): void };
}

/**
 * The app on the proxy port. Every path belongs to Elasticsearch: there are no routes, only one
 * handler that reads the body, offers the request to the write path, and otherwise passes it
 * through. Express features that could alter a request or answer in HTML are switched off.
 */
export function createProxyApp(deps: ProxyAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  app.set('trust proxy', false);
  app.use((req: Request, res: Response, next: NextFunction) => {
    deps.inFlight?.start();
    handleProxyRequest(deps, req, res)
      .catch(next)
      .finally(() => deps.inFlight?.end());
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    deps.logger.error({ err: error }, 'proxy request failed');
    sendElasticsearchError(res, asProxyError(error));
  });
  return app;
}

async function handleProxyRequest(deps: ProxyAppDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = randomUUID();
  const startedAt = performance.now();
  const method = req.method ?? 'GET';
  // Captured before anything can rewrite it: the raw path and query go upstream byte for byte.
  const url = req.url ?? '/';
  const log = deps.logger.child({ requestId, method, url });

  let body: Buffer;
  try {
    body = await readRequestBody(req, { maxBytes: deps.maxBodyBytes, idleTimeoutMs: deps.bodyIdleTimeoutMs });
  } catch (error) {
    answerUnreadableBody(res, asProxyError(error), requestId, log);
    return;
  }

  const exchange: InterceptedRequest = { req, res, body, requestId, clientGone: clientGoneSignal(res) };
  if (deps.writeInterceptor !== undefined && (await runInterceptor(deps.writeInterceptor, exchange, requestId, log))) {
    log.debug({ ms: elapsed(startedAt), status: res.statusCode }, 'request handled by the write path');
    return;
  }
  const outcome = await deps.forwarder.pipe({ method, url, headers: req.headers, body }, res);
  const line = { ms: elapsed(startedAt), status: outcome.status, upstreamHost: outcome.upstreamHost };
  if (outcome.error === null) log.debug(line, 'request passed through');
  else log.warn({ ...line, err: outcome.error }, 'pass-through failed');
}

async function runInterceptor(interceptor: WriteInterceptor, exchange: InterceptedRequest, requestId: string, log: Logger): Promise<boolean> {
  try {
    return await interceptor(exchange);
  } catch (error) {
    const proxyError = asProxyError(error);
    if (proxyError.code === 'INTERNAL') log.error({ err: error }, 'write path failed');
    sendElasticsearchError(exchange.res, proxyError, { 'X-Request-Id': requestId });
    return true;
  }
}

/** Too large or stalled: answer, then close the connection rather than read the rest. */
function answerUnreadableBody(res: ServerResponse, error: ProxyError, requestId: string, log: Logger): void {
  log.info({ code: error.code, reason: error.message }, 'request body rejected');
  if (res.destroyed) return;
  res.shouldKeepAlive = false;
  sendElasticsearchError(res, error, { 'X-Request-Id': requestId, connection: 'close' });
}

function elapsed(startedAt: number): number {
  return Math.round(performance.now() - startedAt);
}
