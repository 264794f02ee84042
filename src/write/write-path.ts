import { parsePriority } from '../classify/priority-header.js';
import { idsTooLong, idTooLongMessage, unlockableId } from '../classify/document-id.js';
import { ProxyError } from '../errors/proxy-error.js';
import type { Priority } from '../lock/lock-engine.js';
import { handleBulkWrite } from './bulk-write.js';
import { handleSingleWrite } from './single-write.js';
import { errorOutcome, type WriteOutcome } from './write-outcome.js';
import { forwardRequestOf, type WritePathDeps } from './write-path-deps.js';
import type { WriteRequest, WriteRoute } from './write-request.js';

/**
 * The write path: locks what a write names, forwards it, and says how to answer. A `ProxyError`
 * becomes an `error` outcome; anything else thrown is an internal fault for the edge to answer.
 */
export type WritePath = (request: WriteRequest) => Promise<WriteOutcome>;

export function createWritePath(deps: WritePathDeps): WritePath {
  return async (exchange) => {
    try {
      return await dispatch(deps, exchange, exchange.route, priorityOf(deps, exchange));
    } catch (error) {
      if (error instanceof ProxyError) return errorOutcome(error);
      throw error;
    }
  };
}

function priorityOf(deps: WritePathDeps, exchange: WriteRequest): Priority {
  if (exchange.priority !== undefined) return exchange.priority;
  const { lockHeader, lockDefault } = deps.settings().proxy;
  return parsePriority(exchange.req.headers[lockHeader.toLowerCase()], lockDefault, lockHeader);
}

async function dispatch(deps: WritePathDeps, exchange: WriteRequest, route: WriteRoute, priority: Priority): Promise<WriteOutcome> {
  switch (route.kind) {
    case 'single': {
      // Elasticsearch refuses such an id before anything is written: answered here, nothing locked or forwarded.
      const tooLong = idTooLongMessage(route.op, route.id);
      if (tooLong !== null) throw idsTooLong([tooLong]);
      const unlockable = unlockableId(route.id);
      if (unlockable !== null) throw unlockable;
      return handleSingleWrite(deps, exchange, { op: route.op, index: route.index, id: route.id }, priority);
    }
    case 'bulk':
      return handleBulkWrite(deps, exchange, route, priority);
    case 'auto-id':
      // A generated id cannot collide with any other write: nothing to lock.
      return forwardUnlocked(deps, exchange);
    case 'by-query':
      return handleByQuery(deps, exchange, route.op);
  }
}

function handleByQuery(deps: WritePathDeps, exchange: WriteRequest, op: string): WriteOutcome {
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

function forwardUnlocked(deps: WritePathDeps, exchange: WriteRequest): WriteOutcome {
  return { kind: 'forward', request: forwardRequestOf(exchange, deps.settings()) };
}
