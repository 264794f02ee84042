import { parsePriority } from '../classify/priority-header.js';
import { exceedsIdLimit } from '../classify/bulk-parser.js';
import { ProxyError } from '../errors/proxy-error.js';
import { sendElasticsearchError } from '../http/elasticsearch-error.js';
import { responseOptionsOf } from '../http/response-options/response-options.js';
import type { Priority } from '../lock/lock-engine.js';
import { handleBulkWrite } from './bulk-write.js';
import type { InterceptedRequest as ClientExchange, WriteInterceptor, WriteRoute } from '../http/write-interceptor.js';
import { handleSingleWrite } from './single-write.js';
import { withReadableBody } from './readable-body.js';
import { forwardRequestOf, type WritePathDeps } from './write-path-deps.js';

/** The write path as the proxy port calls it, with the route the edge classified. */
export function createWriteInterceptor(deps: WritePathDeps): WriteInterceptor {
  return async (received) => {
    try {
      // Refused before any lock is taken: the proxy may compose the answer, and Elasticsearch refuses these too.
      responseOptionsOf(received.req.url ?? '/');
      const exchange = await withReadableBody(received, deps.settings(), deps.logger);
      await dispatch(deps, exchange, exchange.route, priorityOf(deps, exchange));
    } catch (error) {
      answerFailure(deps, received, error);
    }
  };
}

function priorityOf(deps: WritePathDeps, exchange: ClientExchange): Priority {
  const { lockHeader, lockDefault } = deps.settings().proxy;
  return parsePriority(exchange.req.headers[lockHeader.toLowerCase()], lockDefault, lockHeader);
}

async function dispatch(
  deps: WritePathDeps,
  exchange: ClientExchange,
  route: WriteRoute,
  priority: Priority,
): Promise<void> {
  switch (route.kind) {
    case 'single':
      // Elasticsearch rejects ids over 512 bytes without writing anything: no lock to take.
      if (exceedsIdLimit(route.id)) return forwardUnlocked(deps, exchange);
      return handleSingleWrite(deps, exchange, { op: route.op, index: route.index, id: route.id }, priority);
    case 'bulk':
      return handleBulkWrite(deps, exchange, route, priority);
    case 'auto-id':
      // A generated id cannot collide with any other write: nothing to lock.
      return forwardUnlocked(deps, exchange);
    case 'by-query':
      return handleByQuery(deps, exchange, route.op);
  }
}

async function handleByQuery(deps: WritePathDeps, exchange: ClientExchange, op: string): Promise<void> {
  if (deps.settings().proxy.byQueryPolicy === 'reject') {
    throw new ProxyError(
      'BY_QUERY_REJECTED',
      `_${op} writes cannot be locked per document and are rejected by this proxy (proxy.byquery.policy=reject)`,
    );
  }
  deps.logger.warn(
    { requestId: exchange.requestId, method: exchange.req.method, url: exchange.req.url, op },
    'by-query write passed through without document locks',
  );
  return forwardUnlocked(deps, exchange);
}

async function forwardUnlocked(deps: WritePathDeps, exchange: ClientExchange): Promise<void> {
  await deps.forwarder.pipe(forwardRequestOf(exchange, deps.settings()), exchange.res);
}

function answerFailure(deps: WritePathDeps, exchange: ClientExchange, error: unknown): void {
  const proxyError =
    error instanceof ProxyError
      ? error
      : new ProxyError('INTERNAL', 'internal error in the write path', { cause: error });
  if (proxyError.code === 'INTERNAL') deps.logger.error({ err: error, requestId: exchange.requestId }, 'write path failed');
  if (exchange.res.headersSent || exchange.res.destroyed) return;
  sendElasticsearchError(exchange.res, proxyError);
}
