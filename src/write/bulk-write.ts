import { exceedsIdLimit, parseBulkBody, sliceBulkBody, type BulkItem } from '../classify/bulk-parser.js';
import { checkBulkContentType } from '../classify/content-type.js';
import { ERROR_CODES } from '../errors/error-codes.js';
import { ProxyError } from '../errors/proxy-error.js';
import { sendElasticsearchError } from '../http/elasticsearch-error.js';
import { relayUpstreamResponse, sendJson } from '../http/relay-response.js';
import { presentedUpstreamError } from '../http/response-options/present.js';
import { lenientResponseOptionsOf } from '../http/response-options/response-options.js';
import type { AcquireManyResult, Priority } from '../lock/lock-engine.js';
import { acquireRound } from './acquire-with-retry.js';
import { backoffDelayMs, delay } from './backoff.js';
import { distinctKeys, keyId, lockTimeoutItem, proxyItemResult, type BulkItemResult, type KeyedBulkItem } from './bulk-items.js';
import { parseBulkResponse, renderBulkResponse } from './bulk-response.js';
import { deadLetter } from './dead-letter.js';
import type { InterceptedRequest as ClientExchange } from '../http/write-interceptor.js';
import type { LockOutcome } from './write-observer.js';
import { forwardRequestOf, type WritePathDeps } from './write-path-deps.js';

/** State of one bulk request across its lock rounds. */
interface BulkRun {
  readonly deps: WritePathDeps;
  readonly exchange: ClientExchange;
  readonly priority: Priority;
  readonly defaultIndex: string | null;
  readonly items: readonly KeyedBulkItem[];
  readonly results: Map<number, BulkItemResult>;
  took: number;
  readonly attemptTimes: number[];
  forwardedAnything: boolean;
  waitMs: number;
  holdMs: number;
  lastUpstreamStatus: number | null;
}

/**
 * `_bulk`: lock every document the request names (`acquireMany`, canonical order, partial), then
 * forward. When every lock was had in the first round the original body goes through untouched
 * and the answer streams back. Otherwise the locked items are forwarded as a sub-bulk, and the
 * rest either wait another round (background, up to `elastic.request.retry.count`) or come back
 * as per-item 429s in the same 200 answer — never a whole-request 429 (it would abort the
 * official bulk helper) and never a 5xx once anything was forwarded.
 */
export async function handleBulkWrite(
  deps: WritePathDeps,
  exchange: ClientExchange,
  route: { readonly defaultIndex: string | null; readonly typed: boolean },
  priority: Priority,
): Promise<void> {
  const { defaultIndex } = route;
  checkBulkContentType(exchange.req.headers['content-type'], exchange.body.length);
  const items = await keyItems(deps, parseBulkBody(exchange.body, defaultIndex, { allowTypeMetadata: route.typed }));
  const run: BulkRun = {
    deps,
    exchange,
    priority,
    defaultIndex,
    items,
    results: new Map(),
    took: 0,
    attemptTimes: [],
    forwardedAnything: false,
    waitMs: 0,
    holdMs: 0,
    lastUpstreamStatus: null,
  };
  let outcome: LockOutcome = 'acquired';
  try {
    outcome = await runRounds(run);
  } finally {
    report(run, outcome, distinctKeys(items).length);
  }
}

function report(run: BulkRun, outcome: LockOutcome, documents: number): void {
  run.deps.observer.lockedRequest({
    requestId: run.exchange.requestId,
    method: run.exchange.req.method ?? '',
    index: run.defaultIndex ?? '_bulk',
    documents,
    priority: run.priority,
    waitMs: run.waitMs,
    holdMs: run.holdMs,
    queuePosition: null,
    outcome,
    upstreamStatus: run.lastUpstreamStatus,
    attempt: run.attemptTimes.length,
  });
}

/**
 * Items without an id (auto-generated) and with an id Elasticsearch rejects as too long cannot
 * collide with another write, so they carry no key and are forwarded without a lock.
 */
async function keyItems(deps: WritePathDeps, items: readonly BulkItem[]): Promise<KeyedBulkItem[]> {
  const lockable = (item: BulkItem): item is BulkItem & { id: string } => item.id !== null && !exceedsIdLimit(item.id);
  const names = [...new Set(items.filter(lockable).map((item) => item.index))];
  const lockIndices = new Map(await Promise.all(names.map(async (name) => [name, await deps.aliases.lockIndexFor(name)] as const)));
  return items.map((item) => ({
    item,
    key: lockable(item) ? { index: lockIndices.get(item.index) ?? item.index, id: item.id } : null,
  }));
}

async function runRounds(run: BulkRun): Promise<LockOutcome> {
  const { deps, exchange, priority } = run;
  let pending: readonly KeyedBulkItem[] = run.items;
  for (let round = 1; ; round++) {
    const keys = distinctKeys(pending);
    const waitStarted = Date.now();
    run.attemptTimes.push(waitStarted);
    const locks = keys.length === 0 ? null : await acquireOrFailRound(run, pending, keys);
    if (locks === undefined) return 'unavailable';
    run.waitMs += Date.now() - waitStarted;
    const held = new Set((locks?.acquired ?? []).filter((lock) => !lock.lost.aborted).map((lock) => keyId(lock.key)));
    const ready = pending.filter((keyed) => keyed.key === null || held.has(keyId(keyed.key)));
    const waiting = pending.filter((keyed) => keyed.key !== null && !held.has(keyId(keyed.key)));
    const holdStarted = Date.now();
    try {
      if (round === 1 && waiting.length === 0) {
        await forwardWhole(run);
        return 'acquired';
      }
      if (ready.length > 0 && (await forwardSubset(run, ready)) === 'answered') return 'acquired';
    } finally {
      run.holdMs += Date.now() - holdStarted;
      if (locks !== null) void locks.releaseAll().catch((error: unknown) => deps.logger.error({ err: error }, 'bulk lock release failed'));
    }
    if (waiting.length === 0) break;
    const retry = priority === 'background' && round <= deps.settings().elasticsearch.requestRetryCount;
    if (!retry) {
      return answerTimedOut(run, waiting);
    }
    report(run, 'retried', distinctKeys(waiting).length);
    // A client that hangs up during the backoff is gone, not an internal error.
    if (!(await delay(backoffDelayMs(round - 1), exchange.clientGone).then(() => true, () => false))) return 'aborted';
    pending = waiting;
  }
  sendMerged(run);
  return 'acquired';
}

/**
 * One `acquireMany` round. When the lock service is down: before anything was forwarded the whole
 * request is answered 503 (a replay is safe); afterwards the remaining items get per-item 503s.
 * Resolves `undefined` when the request has been answered that way.
 */
async function acquireOrFailRound(
  run: BulkRun,
  pending: readonly KeyedBulkItem[],
  keys: ReturnType<typeof distinctKeys>,
): Promise<AcquireManyResult | undefined> {
  try {
    return await acquireRound(run.deps, run.exchange, keys, run.priority, `${run.exchange.req.method} ${run.exchange.req.url}`);
  } catch (error) {
    if (run.exchange.clientGone.aborted) return undefined;
    if (!(error instanceof ProxyError)) throw error;
    if (!run.forwardedAnything) {
      sendElasticsearchError(run.exchange.res, error);
      return undefined;
    }
    recordFailure(run, pending, error);
    sendMerged(run);
    return undefined;
  }
}

async function forwardWhole(run: BulkRun): Promise<void> {
  run.forwardedAnything = true;
  const outcome = await run.deps.forwarder.pipe(forwardRequestOf(run.exchange, run.deps.settings()), run.exchange.res);
  run.lastUpstreamStatus = outcome.status;
}

/**
 * Forwards the items whose locks are held as a sub-bulk and records their results by position.
 * Resolves 'answered' when Elasticsearch rejected the first sub-bulk as a whole (auth, a bad
 * parameter): the client then sees Elasticsearch's own answer.
 */
async function forwardSubset(run: BulkRun, ready: readonly KeyedBulkItem[]): Promise<'answered' | 'recorded'> {
  const body = sliceBulkBody(run.exchange.body, ready.map((keyed) => keyed.item));
  const firstUpstreamCall = !run.forwardedAnything;
  run.forwardedAnything = true;
  try {
    const upstream = await run.deps.forwarder.exchange(forwardRequestOf(run.exchange, run.deps.settings(), { body, mergesAnswer: true }));
    run.lastUpstreamStatus = upstream.status;
    if (upstream.status >= 300 && firstUpstreamCall) {
      relayUpstreamResponse(run.exchange.res, presentedUpstreamError(upstream, lenientResponseOptionsOf(run.exchange.req.url)));
      return 'answered';
    }
    const parsed = parseBulkResponse(upstream.body, ready.length);
    run.took += parsed.took;
    ready.forEach((keyed, i) => run.results.set(keyed.item.position, parsed.items[i] ?? {}));
  } catch (error) {
    if (!(error instanceof ProxyError)) throw error;
    recordFailure(run, ready, error);
  }
  return 'recorded';
}

function recordFailure(run: BulkRun, items: readonly KeyedBulkItem[], error: ProxyError): void {
  const { status, type } = ERROR_CODES[error.code];
  for (const keyed of items) run.results.set(keyed.item.position, proxyItemResult(keyed, status, type, error.message));
}

/** Per-item 429s for the items still waiting; background ones go to the dead-letter queue. */
async function answerTimedOut(run: BulkRun, waiting: readonly KeyedBulkItem[]): Promise<LockOutcome> {
  for (const keyed of waiting) run.results.set(keyed.item.position, lockTimeoutItem(keyed, run.waitMs));
  const headers: Record<string, string> = {};
  let outcome: LockOutcome = 'timeout';
  if (run.priority === 'background') {
    const deadLetterId = await deadLetter(run.deps, run.exchange, {
      body: sliceBulkBody(run.exchange.body, waiting.map((keyed) => keyed.item)),
      priority: run.priority,
      keys: distinctKeys(waiting),
      attemptTimes: run.attemptTimes,
      lastError: { code: 'LOCK_TIMEOUT', message: `lock wait for ${waiting.length} documents timed out after ${run.waitMs}ms` },
    });
    if (deadLetterId !== null) {
      headers['X-Dead-Letter-Id'] = deadLetterId;
      outcome = 'dead_lettered';
    }
  }
  sendMerged(run, headers);
  return outcome;
}

function sendMerged(run: BulkRun, headers: Record<string, string> = {}): void {
  const items = run.items.map((keyed) => run.results.get(keyed.item.position) ?? proxyItemResult(keyed, 500, 'internal_proxy_exception', 'item has no result'));
  sendJson(run.exchange.res, 200, renderBulkResponse(run.took, items), headers);
}
