import { ProxyError } from '../errors/proxy-error.js';
import type { UpstreamResponse } from '../elasticsearch/upstream-forwarder.js';
import type { HeldLock, LockKey, Priority } from '../lock/lock-engine.js';
import { acquireWithRetry } from './acquire-with-retry.js';
import { giveUp } from './background-retry.js';
import { lockLostBeforeForwarding, lockNotUsableAtHandOver, lockWaitTimeout, retryAfterSeconds } from './lock-errors.js';
import { singleWriteReporter, type LockOutcome } from './write-observer.js';
import { DONE, errorOutcome, type WriteOutcome } from './write-outcome.js';
import { forwardRequestOf, type WritePathDeps } from './write-path-deps.js';
import type { WriteRequest } from './write-request.js';
import type { SingleWriteOp } from '../classify/route-parser.js';
import { documentKey } from '../classify/document-id.js';
import { forwardFenced, singleFenceableAction, type SingleFenceTarget } from './fencing/fenced-single-write.js';

/** A name crosses at most one boundary per wait, and the second resolution waits it out. */
const MAX_REKEYS = 2;

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
  exchange: WriteRequest,
  target: SingleWriteTarget,
  priority: Priority,
  rekeyed = 0,
): Promise<WriteOutcome> {
  const names = await deps.aliases.resolveName(target.index);
  const key: LockKey = documentKey(names.lockIndex, target.id);
  const report = singleWriteReporter(deps.observer, exchange, key, priority);
  let acquired;
  try {
    acquired = await acquireWithRetry(deps, exchange, key, priority, `${exchange.req.method} ${exchange.req.url}`);
  } catch (error) {
    report(exchange.clientGone.aborted ? 'aborted' : 'unavailable', 0, 0, null, 1);
    if (exchange.clientGone.aborted) return DONE;
    throw error;
  }
  if (acquired.kind === 'aborted') {
    report('aborted', 0, 0, null, acquired.attemptTimes.length);
    return DONE;
  }
  if (acquired.kind === 'timed_out') return answerTimeout(deps, exchange, key, priority, acquired);
  const { lock } = acquired;
  if (!deps.aliases.stillResolvesTo(target.index, names)) {
    // The lock wait carried the write past a boundary of its date-math name: lock the new name.
    releaseInBackground(deps, lock);
    report('retried', acquired.waitedMs, 0, null, acquired.attemptTimes.length);
    if (rekeyed >= MAX_REKEYS) throw new ProxyError('DATE_MATH_UNSUPPORTED', `date-math index name [${target.index}] kept changing while its lock was awaited`);
    return handleSingleWrite(deps, exchange, target, priority, rekeyed + 1);
  }
  const heldSince = Date.now();
  let outcome: LockOutcome = 'acquired';
  let upstreamStatus: number | null = null;
  try {
    // A link suspended right now may come back within the session: wait for it (lost: not sent).
    const lost = await lostBeforeForwarding(exchange, lock);
    if (lost !== null) {
      outcome = exchange.clientGone.aborted ? 'aborted' : 'lost';
      return lost;
    }
    // Checked again at the moment the request is handed to the upstream socket: a connect can take
    // long enough for the lock to be lost, or its link suspended, meanwhile.
    const usableAtHandOver = (): ProxyError | null => (lock.usable() ? null : lockNotUsableAtHandOver(key));
    // The fence reads the id as the client sent it: Elasticsearch routes a read by the id's own characters.
    const fenceTarget = { op: target.op, readIndex: names.readIndex, indexRouting: names.indexRouting, lockIndex: key.index, id: target.id };
    const answer = await forwardWrite(deps, exchange, lock, fenceTarget, usableAtHandOver);
    releaseInBackground(deps, lock);
    if (answer.kind === 'upstream') upstreamStatus = answer.upstream.status;
    return answer;
  } finally {
    releaseInBackground(deps, lock);
    // The write may have overlapped another writer: the oracle of last resort is this error line.
    if (lock.isLost && outcome === 'acquired') outcome = 'lost';
    report(outcome, acquired.waitedMs, Date.now() - heldSince, upstreamStatus, acquired.attemptTimes.length, lock.queuePositionOnArrival);
  }
}

/** Waits while the lock's link is suspended; a lost lock is answered 503 (nothing to answer to a client gone). */
async function lostBeforeForwarding(exchange: WriteRequest, lock: HeldLock): Promise<WriteOutcome | null> {
  try {
    await lock.untilUsable(exchange.clientGone);
    return null;
  } catch {
    return exchange.clientGone.aborted ? DONE : errorOutcome(lockLostBeforeForwarding(lock.key));
  }
}

/**
 * Forwards as the client sent it, or fenced (proxy.fencing=on and a fence applies: never
 * unfenced then). Any ProxyError, a failed fence read included, is answered in Elasticsearch's shape.
 */
async function forwardWrite(
  deps: WritePathDeps,
  exchange: WriteRequest,
  lock: HeldLock,
  target: SingleFenceTarget,
  beforeSend: () => ProxyError | null,
): Promise<WriteOutcome> {
  try {
    const send = (url?: string): Promise<UpstreamResponse> => forwardOnce(deps, exchange, beforeSend, url);
    const action = deps.settings().proxy.fencing === 'on' ? singleFenceableAction(exchange, target.op) : null;
    const upstream = action === null ? await send() : await forwardFenced(deps, exchange, lock, { ...target, action }, send);
    return { kind: 'upstream', upstream };
  } catch (error) {
    if (!(error instanceof ProxyError)) throw error;
    return errorOutcome(error);
  }
}

function forwardOnce(deps: WritePathDeps, exchange: WriteRequest, beforeSend: () => ProxyError | null, url?: string): Promise<UpstreamResponse> {
  return deps.forwarder.exchange(forwardRequestOf(exchange, deps.settings(), { readsAnswer: true, beforeSend, ...(url === undefined ? {} : { url }) }));
}

/** Release is off the request path; the engine retries it across reconnects. */
function releaseInBackground(deps: WritePathDeps, lock: HeldLock): void {
  lock.release().catch((error: unknown) => deps.logger.error({ err: error, key: lock.key }, 'lock release failed'));
}

async function answerTimeout(
  deps: WritePathDeps,
  exchange: WriteRequest,
  key: LockKey,
  priority: Priority,
  result: { attemptTimes: readonly number[]; waitedMs: number; timeoutMs: number },
): Promise<WriteOutcome> {
  const error = lockWaitTimeout(key, result.waitedMs);
  const givenUp = await giveUp(deps, exchange, {
    body: exchange.body,
    priority,
    keys: [key],
    attemptTimes: result.attemptTimes,
    lastError: { code: error.code, message: error.message },
  });
  singleWriteReporter(deps.observer, exchange, key, priority)(givenUp.outcome, result.waitedMs, 0, null, result.attemptTimes.length);
  const retryAfter = retryAfterSeconds(result.timeoutMs);
  return errorOutcome(error, givenUp.deadLetterId === null ? { retryAfterSeconds: retryAfter } : { retryAfterSeconds: retryAfter, deadLetterId: givenUp.deadLetterId });
}
