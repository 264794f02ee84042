import { sendElasticsearchError } from '../http/elasticsearch-error.js';
import { relayUpstreamResponse } from '../http/relay-response.js';
import { ProxyError } from '../errors/proxy-error.js';
import type { HeldLock, LockKey, Priority } from '../lock/lock-engine.js';
import type { UpstreamResponse } from '../http/upstream-forwarder.js';
import { acquireWithRetry } from './acquire-with-retry.js';
import { giveUp } from './background-retry.js';
import type { InterceptedRequest as ClientExchange } from '../http/write-interceptor.js';
import { lockLostBeforeForwarding, lockNotUsableAtHandOver, lockWaitTimeout, retryAfterSeconds } from './lock-errors-http.js';
import { singleWriteReporter, type LockOutcome } from './write-observer.js';
import { forwardRequestOf, type WritePathDeps } from './write-path-deps.js';
import type { SingleWriteOp } from '../classify/route-parser.js';
import { forwardFenced, singleFenceableAction, type SingleFenceTarget } from './fencing/fenced-single-write.js';

export interface SingleWriteTarget {
  readonly op: SingleWriteOp;
  /** Index name as the client wrote it (may be an alias). */
  readonly index: string;
  readonly id: string;
}

/**
 * Lock one document, forward, release when Elasticsearch has answered. The response is
 * buffered (single-document answers are small) so that the lock is released the moment the
 * upstream exchange ends, whatever the client does, and so `_index` can be checked against the
 * alias cache.
 */
export async function handleSingleWrite(
  deps: WritePathDeps,
  exchange: ClientExchange,
  target: SingleWriteTarget,
  priority: Priority,
): Promise<void> {
  const names = await deps.aliases.resolveName(target.index);
  const key: LockKey = { index: names.lockIndex, id: target.id };
  const report = singleWriteReporter(deps.observer, exchange, key, priority);
  let acquired;
  try {
    acquired = await acquireWithRetry(deps, exchange, key, priority, `${exchange.req.method} ${exchange.req.url}`);
  } catch (error) {
    report(exchange.clientGone.aborted ? 'aborted' : 'unavailable', 0, 0, null, 1);
    if (exchange.clientGone.aborted) return;
    throw error;
  }
  if (acquired.kind === 'aborted') {
    report('aborted', 0, 0, null, acquired.attemptTimes.length);
    return;
  }
  if (acquired.kind === 'timed_out') {
    await answerTimeout(deps, exchange, key, priority, acquired);
    return;
  }
  const { lock } = acquired;
  const heldSince = Date.now();
  let outcome: LockOutcome = 'acquired';
  let upstreamStatus: number | null = null;
  try {
    // A link suspended right now may come back within the session: wait for it (lost: not sent).
    if (!(await usableOrAnswered(exchange, lock))) {
      outcome = exchange.clientGone.aborted ? 'aborted' : 'lost';
      return;
    }
    // Checked again at the moment the request is handed to the upstream socket: a connect can take
    // long enough for the lock to be lost, or its link suspended, meanwhile.
    const usableAtHandOver = (): ProxyError | null => (lock.usable() ? null : lockNotUsableAtHandOver(key));
    const fenceTarget = { op: target.op, readIndex: names.readIndex, lockIndex: key.index, id: key.id };
    const upstream = await forwardWrite(deps, exchange, lock, fenceTarget, usableAtHandOver);
    releaseInBackground(deps, lock);
    if (upstream === null) return;
    upstreamStatus = upstream.status;
    relayUpstreamResponse(exchange.res, upstream);
  } finally {
    releaseInBackground(deps, lock);
    // The write may have overlapped another writer: the oracle of last resort is this error line.
    if (lock.isLost && outcome === 'acquired') outcome = 'lost';
    report(outcome, acquired.waitedMs, Date.now() - heldSince, upstreamStatus, acquired.attemptTimes.length, lock.queuePositionOnArrival);
  }
}

/** Waits while the lock's link is suspended; a lost lock (or a client gone) is answered here: false. */
async function usableOrAnswered(exchange: ClientExchange, lock: HeldLock): Promise<boolean> {
  try {
    await lock.untilUsable(exchange.clientGone);
    return true;
  } catch {
    if (!exchange.clientGone.aborted) sendElasticsearchError(exchange.res, lockLostBeforeForwarding(lock.key));
    return false;
  }
}

/**
 * Forwards as the client sent it, or fenced (proxy.fencing=on and a fence applies: never
 * unfenced then). Any failure, a failed fence read included, is answered here and yields `null`.
 */
async function forwardWrite(
  deps: WritePathDeps,
  exchange: ClientExchange,
  lock: HeldLock,
  target: SingleFenceTarget,
  beforeSend: () => ProxyError | null,
): Promise<UpstreamResponse | null> {
  const send = (url?: string): Promise<UpstreamResponse | null> => answeringErrors(exchange, () => forwardOnce(deps, exchange, beforeSend, url));
  const action = deps.settings().proxy.fencing === 'on' ? singleFenceableAction(exchange, target.op) : null;
  if (action === null) return send();
  return answeringErrors(exchange, () => forwardFenced(deps, exchange, lock, { ...target, action }, send));
}

function forwardOnce(deps: WritePathDeps, exchange: ClientExchange, beforeSend: () => ProxyError | null, url?: string): Promise<UpstreamResponse> {
  return deps.forwarder.exchange(forwardRequestOf(exchange, deps.settings(), { readsAnswer: true, beforeSend, ...(url === undefined ? {} : { url }) }));
}

/** A ProxyError is answered in Elasticsearch's shape and yields `null`. */
async function answeringErrors(exchange: ClientExchange, run: () => Promise<UpstreamResponse | null>): Promise<UpstreamResponse | null> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ProxyError)) throw error;
    sendElasticsearchError(exchange.res, error);
    return null;
  }
}

/** Release is off the request path; the engine retries it across reconnects. */
function releaseInBackground(deps: WritePathDeps, lock: HeldLock): void {
  lock.release().catch((error: unknown) => deps.logger.error({ err: error, key: lock.key }, 'lock release failed'));
}

async function answerTimeout(
  deps: WritePathDeps,
  exchange: ClientExchange,
  key: LockKey,
  priority: Priority,
  result: { attemptTimes: readonly number[]; waitedMs: number; timeoutMs: number },
): Promise<void> {
  const error = lockWaitTimeout(key, result.waitedMs);
  const headers: Record<string, string> = { 'Retry-After': retryAfterSeconds(result.timeoutMs) };
  const givenUp = await giveUp(deps, exchange, {
    body: exchange.body,
    priority,
    keys: [key],
    attemptTimes: result.attemptTimes,
    lastError: { code: error.code, message: error.message },
  });
  if (givenUp.deadLetterId !== null) headers['X-Dead-Letter-Id'] = givenUp.deadLetterId;
  singleWriteReporter(deps.observer, exchange, key, priority)(givenUp.outcome, result.waitedMs, 0, null, result.attemptTimes.length);
  sendElasticsearchError(exchange.res, error, headers);
}
