import { parseBulkBody, sliceBulkBody, type BulkItem } from '../classify/bulk-parser.js';
import { documentKey, idsTooLong, idTooLongMessage, unlockableId } from '../classify/document-id.js';
import { checkBulkContentType } from '../classify/content-type.js';
import { isDateMathName } from '../classify/date-math/date-math-index-name.js';
import { elasticsearchTypeFor, statusFor } from '../errors/error-codes.js';
import { ProxyError } from '../errors/proxy-error.js';
import type { ResolvedName } from './alias-resolver.js';
import type { Priority } from '../lock/lock-engine.js';
import { backOff, giveUp, retriesAfterTimeout } from './background-retry.js';
import { distinctKeys, lockTimeoutItem, proxyItemResult, type KeyedBulkItem } from './bulk-items.js';
import { renderBulkResponse } from './bulk-response.js';
import { runRound } from './bulk-round.js';
import { type BulkRun, recordFailure } from './bulk-run.js';
import type { WriteRequest } from './write-request.js';
import type { LockOutcome } from './write-observer.js';
import type { WritePathDeps } from './write-path-deps.js';
import { type AnswerNotes, DONE, errorOutcome, NO_NOTES, type WriteOutcome } from './write-outcome.js';

/**
 * `_bulk`: lock the documents the request names without hold-and-wait (`acquireEach`, see
 * bulk-round.ts): items go out as sub-bulks as their locks come, each sub-bulk's locks released
 * when Elasticsearch answered it; when every lock is had at once, the original body goes through
 * untouched and the answer streams back. Items whose lock wait timed out either wait another
 * round (background, up to `elastic.request.retry.count`, with backoff) or come back as per-item
 * 429s in the same 200 answer — never a whole-request 429 (it would abort the official bulk
 * helper) and never a 5xx once anything was forwarded.
 */
export async function handleBulkWrite(
  deps: WritePathDeps,
  exchange: WriteRequest,
  route: { readonly defaultIndex: string | null; readonly typed: boolean },
  priority: Priority,
): Promise<WriteOutcome> {
  const { defaultIndex } = route;
  checkBulkContentType(exchange.req.headers['content-type'], exchange.body.length);
  const { items, dateMathNames } = await keyItems(deps, parseBulkBody(exchange.body, defaultIndex, { allowTypeMetadata: route.typed }));
  const run: BulkRun = {
    deps,
    exchange,
    priority,
    defaultIndex,
    items,
    dateMathNames,
    results: new Map(),
    took: 0,
    documents: 0,
    attemptTimes: [],
    forwardedAnything: false,
    waitMs: 0,
    holdMs: 0,
    lastUpstreamStatus: null,
    refusal: null,
  };
  const permitted = await answerUnauthorizedItems(run);
  let outcome: LockOutcome = 'acquired';
  try {
    const rounds = permitted.length === 0 ? { outcome, answer: merged(run) } : await runRounds(run, permitted);
    outcome = rounds.outcome;
    return rounds.answer;
  } finally {
    report(run, outcome, run.documents);
  }
}

/** How the rounds ended: what the report says, and how the client is answered. */
interface RoundsEnd {
  readonly outcome: LockOutcome;
  readonly answer: WriteOutcome;
}

/** The common ends, allocated once: the answer streamed, or the client gone. */
const STREAMED: RoundsEnd = Object.freeze({ outcome: 'acquired', answer: DONE });
const ABORTED: RoundsEnd = Object.freeze({ outcome: 'aborted', answer: DONE });

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
 * Each item's lock key: the document Elasticsearch writes (`documentKey`). Items without an id are
 * auto-generated and cannot collide, and an item whose date-math `_index` Elasticsearch refuses (it
 * fails that item with `parse_exception`) writes nothing: neither carries a key. An indexed id
 * Elasticsearch refuses as too long fails the whole bulk there before anything runs (Elasticsearch:
 * server/src/main/java/org/elasticsearch/action/bulk/BulkRequest.java, validate, collects every item's
 * IndexRequest/UpdateRequest.validate), so it is answered here the same way, nothing forwarded. A
 * date-math name valid for Elasticsearch that the proxy does not evaluate refuses the whole bulk
 * (400): it would otherwise be written unlocked.
 */
async function keyItems(deps: WritePathDeps, items: readonly BulkItem[]): Promise<{ items: KeyedBulkItem[]; dateMathNames: Map<string, ResolvedName> }> {
  refuseIdsTooLong(items);
  const names = new Set<string>();
  for (const item of items) if (item.id !== null) names.add(item.index);
  const resolved = new Map(await Promise.all([...names].map(async (name) => [name, await resolvedOrRefused(deps, name)] as const)));
  const keyed = items.map((item) => {
    const index = item.id === null ? undefined : resolved.get(item.index)?.lockIndex;
    return { item, key: item.id !== null && index !== undefined ? documentKey(index, item.id) : null };
  });
  // A lock wait can carry an item past a boundary of its date-math name: bulk-round checks these before sending.
  const dateMathNames = new Map<string, ResolvedName>();
  for (const [name, names] of resolved) if (names !== null && isDateMathName(name)) dateMathNames.set(name, names);
  return { items: keyed, dateMathNames };
}

/** What a bulk item's `_index` resolves to; `null` for a date-math name Elasticsearch refuses. */
async function resolvedOrRefused(deps: WritePathDeps, name: string): Promise<ResolvedName | null> {
  try {
    return await deps.aliases.resolveName(name);
  } catch (error) {
    if (error instanceof ProxyError && error.code === 'DATE_MATH_INVALID') return null;
    throw error;
  }
}

function refuseIdsTooLong(items: readonly BulkItem[]): void {
  const messages: string[] = [];
  for (const item of items) {
    if (item.id === null) continue;
    const message = idTooLongMessage(item.action, item.id);
    if (message !== null) messages.push(message);
    else {
      const unlockable = unlockableId(item.id);
      if (unlockable !== null) throw unlockable;
    }
  }
  if (messages.length > 0) throw idsTooLong(messages);
}

/**
 * With `proxy.auth.privileges=on` (`bulkItemRefusal`): the items whose principal may not write
 * their index are answered here as Elasticsearch answers them (403 `security_exception` in the
 * 200), with no lock and nothing sent; the others are returned to go on. Each item is asked about
 * on the index it writes (its lock's, aliases resolved), as Elasticsearch authorizes bulk items.
 */
async function answerUnauthorizedItems(run: BulkRun): Promise<readonly KeyedBulkItem[]> {
  const refusalOf = run.exchange.bulkItemRefusal;
  if (refusalOf === undefined) return run.items;
  const refusals = await Promise.all(run.items.map((keyed) => (keyed.key === null ? null : refusalOf(keyed.key.index, keyed.item.action))));
  const permitted: KeyedBulkItem[] = [];
  run.items.forEach((keyed, n) => {
    const refusal = refusals[n] ?? null;
    if (refusal === null) permitted.push(keyed);
    else run.results.set(keyed.item.position, proxyItemResult(keyed, statusFor(refusal.code), elasticsearchTypeFor(refusal.code), refusal.message));
  });
  return permitted;
}

async function runRounds(run: BulkRun, items: readonly KeyedBulkItem[]): Promise<RoundsEnd> {
  const { deps, exchange, priority } = run;
  let pending: readonly KeyedBulkItem[] = items;
  for (let round = 1; ; round++) {
    const waitStarted = Date.now();
    run.attemptTimes.push(waitStarted);
    const outcome = await runRound(run, pending, round === 1);
    run.waitMs += Date.now() - waitStarted;
    if (outcome.answered) return run.refusal === null ? STREAMED : { outcome: 'acquired', answer: { kind: 'upstream_refusal', upstream: run.refusal } };
    if (outcome.aborted) return ABORTED;
    if (outcome.unavailable !== null) {
      // Nothing forwarded yet: the whole request is answered 503 (a replay is safe).
      if (!run.forwardedAnything) return { outcome: 'unavailable', answer: errorOutcome(outcome.unavailable) };
      recordFailure(run, pending, outcome.unavailable);
      break;
    }
    if (outcome.timedOut.length === 0) break;
    if (!retriesAfterTimeout(deps.settings(), priority, round)) return answerTimedOut(run, outcome.timedOut);
    report(run, 'retried', distinctKeys(outcome.timedOut).length);
    if (!(await backOff(round, exchange.clientGone))) return ABORTED;
    pending = outcome.timedOut;
  }
  return { outcome: 'acquired', answer: merged(run) };
}

/** Per-item 429s for the items still waiting; background ones go to the dead-letter queue. */
async function answerTimedOut(run: BulkRun, waiting: readonly KeyedBulkItem[]): Promise<RoundsEnd> {
  for (const keyed of waiting) run.results.set(keyed.item.position, lockTimeoutItem(keyed, run.waitMs));
  const givenUp = await giveUp(run.deps, run.exchange, {
    body: sliceBulkBody(run.exchange.body, waiting.map((keyed) => keyed.item)),
    priority: run.priority,
    keys: distinctKeys(waiting),
    attemptTimes: run.attemptTimes,
    lastError: { code: 'LOCK_TIMEOUT', message: `lock wait for ${waiting.length} documents timed out after ${run.waitMs}ms` },
  });
  return { outcome: givenUp.outcome, answer: merged(run, givenUp.deadLetterId === null ? NO_NOTES : { deadLetterId: givenUp.deadLetterId }) };
}

/** The merged answer: every item's result in the client's order, as Elasticsearch would have answered it. */
function merged(run: BulkRun, notes: AnswerNotes = NO_NOTES): WriteOutcome {
  const items = run.items.map((keyed) => run.results.get(keyed.item.position) ?? proxyItemResult(keyed, 500, 'internal_proxy_exception', 'item has no result'));
  return { kind: 'composed', status: 200, body: renderBulkResponse(run.took, items), notes };
}
