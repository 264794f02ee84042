import { sliceBulkBody } from '../classify/bulk-parser.js';
import { ProxyError } from '../errors/proxy-error.js';
import type { HeldLock, LockKey } from '../lock/lock-engine.js';
import { keyString } from '../lock/lock-key.js';
import { groupByKey, type KeyedBulkItem } from './bulk-items.js';
import { parseBulkResponse } from './bulk-response.js';
import { type BulkRun, crossedDateMathBoundary, recordFailure } from './bulk-run.js';
import { recordRefusal, refusalOf, type SubBulkOutcome } from './sub-bulk-refusal.js';
import { lockTimeoutMs, ownerOf, forwardRequestOf } from './write-path-deps.js';
import { isLockTimeout, lockNotUsableAtHandOver } from './lock-errors.js';
import { answeredAsSent } from './fencing/bulk-answer-rename.js';
import type { FencedBody } from './fencing/fenced-bulk-body.js';
import { fenceableItems, type FenceableItem } from './fencing/fenceable-item.js';
import { forwardFencedSubBulk } from './fencing/fenced-sub-bulk.js';

/** How one round of lock acquisition for a bulk ended. */
export interface RoundOutcome {
  /** The whole request has been answered: streamed, or Elasticsearch's whole-request refusal kept in `run.refusal`. */
  readonly answered: boolean;
  /** Items whose lock wait timed out: retried in another round, or answered 429. */
  readonly timedOut: readonly KeyedBulkItem[];
  /** The client went away. */
  readonly aborted: boolean;
  /** The lock service refused before anything was forwarded (the whole request may be answered 503). */
  readonly unavailable: ProxyError | null;
}

/**
 * One round: `acquireEach` over the round's distinct keys — WITHOUT hold-and-wait: each key is
 * granted on its own, and the items of the keys granted together go out as one sub-bulk, their
 * locks released when Elasticsearch answered it. Items of one document stay together and in
 * request order. When every key of the first round is granted at once, the original body goes
 * through untouched and the answer streams back.
 *
 * The first sub-bulk of a request goes alone: when it is rejected as a whole (auth, a bad
 * parameter) nothing else has gone and the client gets that answer. Once it is answered, up to
 * `SUB_BULKS_AT_THE_CLUSTER` sub-bulks of the request are at the cluster at once, and the grants
 * that come while that many are there go together as the next. The lock engine grants a large
 * bulk in several transactions; one sub-bulk at a time made the request pay the cluster's fixed
 * cost per sub-bulk one after the other, and a late grant wait for the sub-bulk before it.
 * Concurrent sub-bulks never share a document: a document's items all go with its key's grant.
 */
export async function runRound(run: BulkRun, pending: readonly KeyedBulkItem[], firstRound: boolean): Promise<RoundOutcome> {
  return new Round(run, pending, firstRound).execute();
}

/** Sub-bulks of one request at the cluster at once, after its first was answered: bounded work per request. */
const SUB_BULKS_AT_THE_CLUSTER = 2;

class Round {
  private readonly byKey: ReadonlyMap<string, KeyedBulkItem[]>;
  private unkeyed: KeyedBulkItem[];
  private readonly keys: LockKey[];
  private granted: HeldLock[] = [];
  private flushScheduled = false;
  private readonly inFlight: Promise<void>[] = [];
  /** Sub-bulks at the cluster: at the limit, grants wait in `granted` and go together when one is answered. */
  private subBulksInFlight = 0;
  /** A sub-bulk of this request was answered (in an earlier round, or this one): the next may overlap. */
  private oneAnswered: boolean;
  /** `acquireEach` has settled every key: no grant comes any more. */
  private acquisitionOver = false;
  private answered = false;
  private readonly stop = new AbortController();
  /** Items to fence, by position (empty with proxy.fencing=off). */
  private readonly fenceable: ReadonlyMap<number, FenceableItem>;

  constructor(
    private readonly run: BulkRun,
    pending: readonly KeyedBulkItem[],
    private readonly firstRound: boolean,
  ) {
    ({ byKey: this.byKey, keys: this.keys } = groupByKey(pending));
    this.unkeyed = pending.filter((keyed) => keyed.key === null);
    if (firstRound) run.documents = this.keys.length;
    this.oneAnswered = run.forwardedAnything;
    this.fenceable = run.deps.settings().proxy.fencing === 'on' ? fenceableItems(run.exchange.body, pending) : new Map();
  }

  async execute(): Promise<RoundOutcome> {
    if (this.keys.length === 0) return this.withoutLocks();
    const { exchange, deps, priority } = this.run;
    const onClientGone = (): void => this.stop.abort(exchange.clientGone.reason);
    exchange.clientGone.addEventListener('abort', onClientGone, { once: true });
    let failed;
    try {
      failed = (
        await deps.locks.acquireEach(this.keys, priority, {
          timeoutMs: lockTimeoutMs(deps.settings(), priority),
          owner: ownerOf(exchange),
          message: `${exchange.req.method} ${exchange.req.url}`,
          signal: this.stop.signal,
          onGranted: (lock) => this.onGranted(lock),
        })
      ).failed;
    } catch (error) {
      if (!(error instanceof ProxyError)) throw error;
      return { answered: false, timedOut: [], aborted: exchange.clientGone.aborted, unavailable: error };
    } finally {
      exchange.clientGone.removeEventListener('abort', onClientGone);
    }
    this.acquisitionOver = true;
    this.flush();
    await this.settle();
    return this.outcome(failed);
  }

  private onGranted(lock: HeldLock): void {
    this.granted.push(lock);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // Grants that arrive together (one batch transaction, one hand-over burst) make one sub-bulk.
    setImmediate(() => this.flush());
  }

  /**
   * Sends what is granted as the next sub-bulk, unless the request's sub-bulks at the cluster are
   * at their limit. Once no grant can come any more, items without a lock that no sub-bulk
   * carried (every key failed) go on their own — when there is room, like every other sub-bulk.
   */
  private flush(): void {
    this.flushScheduled = false;
    if (this.subBulksInFlight >= (this.oneAnswered ? SUB_BULKS_AT_THE_CLUSTER : 1)) return;
    if (this.granted.length === 0 && !(this.acquisitionOver && this.unkeyed.length > 0)) return;
    const locks = this.granted;
    this.granted = [];
    if (this.answered) {
      releaseAll(locks);
      return;
    }
    // The original body can only go as it came when no item of it needs a fence, and none was
    // answered before its lock (an item its principal may not write, bulk-write.ts).
    const allAtOnce =
      this.firstRound &&
      !this.run.forwardedAnything &&
      this.run.results.size === 0 &&
      locks.length === this.keys.length &&
      this.fenceable.size === 0 &&
      !this.run.items.some((keyed) => crossedDateMathBoundary(this.run, keyed));
    if (allAtOnce && locks.every((lock) => lock.usable())) {
      this.inFlight.push(this.forwardWhole(locks));
      return;
    }
    this.inFlight.push(this.nextSubBulk(locks));
  }

  private async nextSubBulk(locks: readonly HeldLock[]): Promise<void> {
    this.subBulksInFlight++;
    try {
      await this.forwardSubBulk(locks);
    } finally {
      this.subBulksInFlight--;
      this.oneAnswered = true;
      // Synchronously, before this promise settles: `settle` sees the next one in `inFlight`.
      this.flush();
    }
  }

  private async forwardWhole(locks: readonly HeldLock[]): Promise<void> {
    this.run.forwardedAnything = true;
    this.answered = true;
    const heldSince = Date.now();
    try {
      const request = forwardRequestOf(this.run.exchange, this.run.deps.settings(), { beforeSend: vouchedFor(locks) });
      const outcome = await this.run.exchange.streamAnswer(request);
      this.run.lastUpstreamStatus = outcome.status;
    } finally {
      this.run.holdMs += Date.now() - heldSince;
      releaseAll(locks);
    }
  }

  /** The items of `locks`' keys (plus unlocked items not sent yet), in request order, as one sub-bulk. */
  private async forwardSubBulk(held: readonly HeldLock[]): Promise<void> {
    // A link suspended right now may come back within the session: wait for it (lost → not sent).
    if (!held.every((lock) => lock.usable())) await Promise.all(held.map((lock) => lock.untilUsable().catch(() => undefined)));
    const usable = held.filter((lock) => lock.usable());
    const lost = held.filter((lock) => !lock.usable());
    for (const lock of lost) recordFailure(this.run, this.byKey.get(keyString(lock.key)) ?? [], lostError(lock.key));
    releaseAll(lost);
    const items = [...this.unkeyed, ...this.sendable(usable.flatMap((lock) => this.byKey.get(keyString(lock.key)) ?? []))];
    this.unkeyed = [];
    items.sort((a, b) => a.item.position - b.item.position);
    const heldSince = Date.now();
    try {
      if (items.length > 0 && (await this.forwardItems(items, usable)) === 'answered') this.answer();
    } finally {
      this.run.holdMs += Date.now() - heldSince;
      releaseAfterThisTurn(usable);
    }
  }

  /**
   * The items still naming the document their key locks. One whose date-math `_index` crossed a
   * boundary while its lock was awaited is answered 429 (retryable: the bulk helpers send it again,
   * keyed on the new name) rather than written under a lock of another document.
   */
  private sendable(items: readonly KeyedBulkItem[]): KeyedBulkItem[] {
    if (this.run.dateMathNames.size === 0) return [...items];
    const crossed = items.filter((keyed) => crossedDateMathBoundary(this.run, keyed));
    if (crossed.length === 0) return [...items];
    for (const keyed of crossed) {
      recordFailure(this.run, [keyed], new ProxyError('DATE_MATH_BOUNDARY_CROSSED', `date-math index name [${keyed.item.index}] names another index than when its lock was requested; send the item again`));
    }
    return items.filter((keyed) => !crossed.includes(keyed));
  }

  /** As they came, or fenced wave by wave when any of them needs a fence (fencing/fenced-sub-bulk.ts). */
  private forwardItems(items: readonly KeyedBulkItem[], locks: readonly HeldLock[]): Promise<SubBulkOutcome> {
    if (!items.some((keyed) => this.fenceable.has(keyed.item.position))) return forwardSubset(this.run, items, vouchedFor(locks));
    return forwardFencedSubBulk({
      run: this.run,
      items,
      fenceable: this.fenceable,
      locks: new Map(locks.map((lock) => [keyString(lock.key), lock])),
      lostError,
      send: (wave, fenced, waveLocks) => forwardSubset(this.run, wave, vouchedFor(waveLocks), fenced),
    });
  }

  /** Elasticsearch answered the whole request: stop waiting for the other keys. */
  private answer(): void {
    this.answered = true;
    this.stop.abort(new Error('bulk answered by Elasticsearch'));
  }

  private async settle(): Promise<void> {
    // A sub-bulk's end starts the next one: more in-flight work may come while we wait.
    for (let done = 0; done < this.inFlight.length; ) {
      const waiting = this.inFlight.slice(done);
      done = this.inFlight.length;
      await Promise.all(waiting);
    }
  }

  private async withoutLocks(): Promise<RoundOutcome> {
    if (this.firstRound && !this.run.forwardedAnything) {
      this.inFlight.push(this.forwardWhole([]));
      await this.settle();
      return { answered: true, timedOut: [], aborted: false, unavailable: null };
    }
    if (this.unkeyed.length > 0) this.inFlight.push(this.nextSubBulk([]));
    await this.settle();
    return { answered: this.answered, timedOut: [], aborted: false, unavailable: null };
  }

  private outcome(failed: ReadonlyMap<string, { readonly key: LockKey; readonly error: Error }>): RoundOutcome {
    const timedOut: KeyedBulkItem[] = [];
    let aborted = false;
    for (const [id, { error }] of failed) {
      const items = this.byKey.get(id) ?? [];
      if (isLockTimeout(error)) timedOut.push(...items);
      else if (error instanceof ProxyError) recordFailure(this.run, items, error);
      else aborted = true;
    }
    timedOut.sort((a, b) => a.item.position - b.item.position);
    return { answered: this.answered, timedOut, aborted: aborted && this.run.exchange.clientGone.aborted, unavailable: null };
  }
}

type BeforeSend = () => ProxyError | null;

/**
 * Checked at the moment a (sub-)bulk is handed to the upstream socket: every lock it is sent under
 * must still be vouched for (not lost, its ZooKeeper link not suspended). Otherwise nothing is sent
 * and its items are answered 503, which a client may replay.
 */
function vouchedFor(locks: readonly HeldLock[]): BeforeSend {
  return () => {
    const doubtful = locks.find((lock) => !lock.usable());
    return doubtful === undefined ? null : lockNotUsableAtHandOver(doubtful.key);
  };
}

function releaseAll(locks: readonly HeldLock[]): void {
  for (const lock of locks) lock.releaseInBackground();
}

/**
 * Releases once the code this answer set going has run: the next sub-bulk handed to the
 * upstream socket, or the merged answer written to the client. Both are on the client's path,
 * the releases of hundreds of locks are not (they are batched into a transaction after this
 * turn anyway); the locks are held a fraction of a millisecond longer.
 */
function releaseAfterThisTurn(locks: readonly HeldLock[]): void {
  if (locks.length > 0) setImmediate(() => releaseAll(locks));
}

function lostError(key: LockKey): ProxyError {
  return new ProxyError('LOCK_UNAVAILABLE', `lock on ${key.index}/${key.id} was lost before the item was forwarded`);
}

/**
 * Forwards items as a sub-bulk and records their results by position. Resolves 'answered' when
 * Elasticsearch rejected the first call as a whole: the client then sees Elasticsearch's answer.
 * A later call rejected as a whole answers its items with the refusal (sub-bulk-refusal.ts).
 */
async function forwardSubset(run: BulkRun, items: readonly KeyedBulkItem[], beforeSend: BeforeSend, fenced?: FencedBody): Promise<SubBulkOutcome> {
  const body = fenced?.body ?? sliceBulkBody(run.exchange.body, items.map((keyed) => keyed.item));
  const firstUpstreamCall = !run.forwardedAnything;
  run.forwardedAnything = true;
  try {
    const upstream = await run.deps.forwarder.exchange(forwardRequestOf(run.exchange, run.deps.settings(), { body, mergesAnswer: true, beforeSend }));
    run.lastUpstreamStatus = upstream.status;
    if (upstream.status >= 300) {
      if (firstUpstreamCall) {
        run.refusal = upstream;
        return 'answered';
      }
      const refused = refusalOf(upstream);
      recordRefusal(run, items, refused);
      return { refused };
    }
    const parsed = parseBulkResponse(upstream.body, items.length);
    run.took += parsed.took;
    const sentAsCreate = (position: number): boolean => fenced?.sentAsCreate.has(position) === true;
    items.forEach((keyed, i) => run.results.set(keyed.item.position, answeredAsSent(parsed.items[i] ?? {}, sentAsCreate(keyed.item.position))));
  } catch (error) {
    if (!(error instanceof ProxyError)) throw error;
    recordFailure(run, items, error);
  }
  return 'ok';
}
