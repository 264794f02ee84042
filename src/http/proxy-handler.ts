import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { classifyRoute, type RouteClassification } from '../classify/route-parser.js';
import type { ProxyError } from '../errors/proxy-error.js';
import { ClientGone } from './client-gone.js';
import { answerUnlessComplete, asProxyError, sendElasticsearchError } from './elasticsearch-error.js';
import { answerFailedWrite } from './failed-write.js';
import { readRequestBody } from './request-body.js';
import { KIND_OF_ROUTE, type RequestEvents, type RequestKind } from './request-kind.js';
import type { UpstreamForwarder } from '../elasticsearch/upstream-forwarder.js';
import type { RefusalAnswer } from '../auth/refusal-answer.js';
import type { WriteRoute } from '../write/write-request.js';
import { ClientWrite } from './client-write.js';
import { readsBodyWhole, type WriteInterceptor } from './write-interceptor.js';

export interface ProxyHandlerDeps {
  readonly forwarder: UpstreamForwarder;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
  /** Default: `readRequestBody`'s own (`DEFAULT_BODY_IDLE_TIMEOUT_MS`). */
  readonly bodyIdleTimeoutMs?: number;
  readonly writeInterceptor?: WriteInterceptor;
  /** Told when a request starts and when it is completely over (for graceful shutdown). */
  readonly inFlight?: { start(): void; end(): void };
  readonly events?: RequestEvents;
}

export type ProxyHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The proxy port's request handler, on bare node:http: every path belongs to Elasticsearch, so
 * there is no router. A request is classified from its method and raw path before any of its
 * body is read. Anything that is not a document write is streamed both ways and costs nothing
 * beyond the forwarding itself (no id, no child logger, no signal, no timer, no header copy).
 * Writes that lock have their body read whole, then go to the write path; writes that need no
 * lock go there with their body still streaming.
 */
export function createProxyHandler(deps: ProxyHandlerDeps): ProxyHandler {
  const { inFlight } = deps;
  const over = inFlight === undefined ? () => undefined : () => inFlight.end();
  return (req, res) => {
    inFlight?.start();
    handle(deps, req, res).then(over, (error: unknown) => {
      over();
      deps.logger.error({ err: error, method: req.method, url: req.url }, 'proxy request failed');
      answerUnlessComplete(res, asProxyError(error));
    });
  };
}

async function handle(deps: ProxyHandlerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // The raw path and query go upstream byte for byte.
  const method = req.method ?? 'GET';
  const url = req.url ?? '/';
  let route: RouteClassification;
  try {
    route = classifyRoute(method, url, req.headers);
  } catch (error) {
    answerUnlessComplete(res, asProxyError(error));
    served(deps, 'write', res);
    return;
  }
  if (route.kind === 'passthrough' || (deps.writeInterceptor === undefined && !readsBodyWhole(route))) {
    const outcome = await deps.forwarder.pipe({ method, url, rawHeaders: req.rawHeaders, body: req }, res);
    if (outcome.error !== null) {
      deps.logger.warn({ method, url, status: outcome.status, upstreamHost: outcome.upstreamHost, err: outcome.error }, 'pass-through failed');
    }
    served(deps, KIND_OF_ROUTE[route.kind], res);
    return;
  }
  await handleWrite(deps, req, res, route);
}

/** A write: its body read whole when it locks, then the write path (or, without one, the upstream). */
async function handleWrite(deps: ProxyHandlerDeps, req: IncomingMessage, res: ServerResponse, route: WriteRoute): Promise<void> {
  const requestId = randomUUID();
  const kind = KIND_OF_ROUTE[route.kind];
  const bodyStreams = !readsBodyWhole(route);
  let body: Buffer = EMPTY;
  const refusal = bodyStreams ? null : (deps.writeInterceptor?.refusalBeforeBody?.(route, req) ?? null);
  if (refusal !== null) {
    await refusal.answerable;
    answerUnread(req, res, refusal.answer, requestId, refusal.close);
    served(deps, kind, res);
    return;
  }
  if (!bodyStreams) {
    try {
      body = await readRequestBody(req, { maxBytes: deps.maxBodyBytes, idleTimeoutMs: deps.bodyIdleTimeoutMs });
    } catch (error) {
      answerUnreadableBody(deps.logger, res, asProxyError(error), requestId);
      served(deps, kind, res);
      return;
    }
  }
  try {
    if (deps.writeInterceptor === undefined) await deps.forwarder.pipe({ method: req.method ?? 'GET', url: req.url ?? '/', rawHeaders: req.rawHeaders, body }, res);
    else {
      const write = new ClientWrite(req, res, route, body, bodyStreams, requestId, new ClientGone(res), deps.forwarder);
      await deps.writeInterceptor(write);
      // The request is in flight (graceful shutdown waits for it) until its answer is delivered.
      await write.delivered();
    }
  } catch (error) {
    answerFailedWrite(deps.logger, res, error, requestId);
  }
  served(deps, kind, res);
}

const EMPTY = Buffer.alloc(0);

/** Counted once the answer has started; a client that left before any answer is not "served". */
function served(deps: ProxyHandlerDeps, kind: RequestKind, res: ServerResponse): void {
  if (res.headersSent) deps.events?.requestServed(kind, res.statusCode);
}

/**
 * A body this small is cheaper to let node:http discard after the answer (read off the socket,
 * never buffered, inflated or parsed) than a new connection for the client's next request.
 */
const DISCARDED_BODY_MAX_BYTES = 64 * 1024;

/**
 * Refused from its head alone. A small body of declared length is discarded unread and the
 * connection kept; a larger or unsized one is not read at all, and the connection closes after the
 * answer, as for a body too large. `close`: the refusal throttle closes it anyway.
 */
function answerUnread(req: IncomingMessage, res: ServerResponse, answer: RefusalAnswer, requestId: string, close: boolean): void {
  if (res.destroyed) return;
  const headers = [...answer.headers, 'content-length', String(Buffer.byteLength(answer.body)), 'X-Request-Id', requestId];
  if (close || !discardable(req)) {
    res.shouldKeepAlive = false;
    headers.push('connection', 'close');
  }
  res.writeHead(answer.status, headers);
  res.end(answer.body);
}

function discardable(req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && declared !== undefined && Number(declared) <= DISCARDED_BODY_MAX_BYTES;
}

/** Too large or stalled: answer, then close the connection rather than read the rest. */
function answerUnreadableBody(logger: Logger, res: ServerResponse, error: ProxyError, requestId: string): void {
  logger.info({ requestId, code: error.code, reason: error.message }, 'request body rejected');
  if (res.destroyed) return;
  res.shouldKeepAlive = false;
  sendElasticsearchError(res, error, { 'X-Request-Id': requestId, connection: 'close' });
}
