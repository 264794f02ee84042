import { ProxyError } from '../../errors/proxy-error.js';
import { queryParams } from '../../elasticsearch/request-params.js';
import type { HeldLock, LockKey } from '../../lock/lock-engine.js';
import { keyString } from '../../lock/lock-key.js';
import type { KeyedBulkItem } from '../bulk-items.js';
import { recordFailure, type BulkRun } from '../bulk-run.js';
import { recordRefusal, type SubBulkOutcome } from '../sub-bulk-refusal.js';
import { fenceFor, type Fence } from './fence.js';
import type { FenceableItem } from './fenceable-item.js';
import { fencedBulkBody, type FencedBody } from './fenced-bulk-body.js';
import { bulkWaves } from './bulk-waves.js';
import { MAX_FENCED_TRIES } from './fenced-single-write.js';
import { RejectedDocuments } from './rejected-documents.js';
import { conflictOfItem } from './version-conflict.js';
import { writeRoutingOf } from './write-routing.js';

/** Sends items as one sub-bulk with the given body under the given locks (bulk-round.ts). */
export type SendSubBulk = (items: readonly KeyedBulkItem[], fenced: FencedBody, locks: readonly HeldLock[]) => Promise<SubBulkOutcome>;

export interface FencedSubBulk {
  readonly run: BulkRun;
  readonly items: readonly KeyedBulkItem[];
  readonly fenceable: ReadonlyMap<number, FenceableItem>;
  /** The held lock of each key (`keyString`). */
  readonly locks: ReadonlyMap<string, HeldLock>;
  readonly lostError: (key: LockKey) => ProxyError;
  readonly send: SendSubBulk;
}

type Fences = Map<number, { readonly fenceable: FenceableItem; readonly fence: Fence }>;

/**
 * A sub-bulk with fenced items: wave by wave (bulk-waves.ts), one `_mget` for the wave's fenced
 * items, the wave sent with the fences written in; then, as for a single write, fenced items
 * refused with 409 under a still-usable lock are read and sent again (at most MAX_FENCED_TRIES
 * tries), and those refused after their lock was lost are the stale writes the fence stopped:
 * reported. A failed read answers the items not sent yet with 503 `fencing_unavailable_exception`.
 * A wave Elasticsearch refuses as a whole ends the sub-bulk: the waves after it get the same
 * refusal, unsent — a document's later item applied before its refused one, which the client
 * retries, would end under it, against the client's order. For the same reason a document whose
 * item was rejected (429, 503) has its later items answered with that rejection, unsent.
 */
export async function forwardFencedSubBulk(sub: FencedSubBulk): Promise<SubBulkOutcome> {
  const waves = bulkWaves(sub.items);
  const rejected = new RejectedDocuments();
  for (const [n, wave] of waves.entries()) {
    try {
      const outcome = await sendWave(sub, rejected.holdBack(sub.run, wave));
      rejected.note(sub.run, wave);
      if (outcome === 'answered') return outcome;
      if (outcome !== 'ok') {
        recordRefusal(sub.run, waves.slice(n + 1).flat(), outcome.refused);
        return outcome;
      }
    } catch (error) {
      if (!(error instanceof ProxyError)) throw error;
      recordFailure(sub.run, waves.slice(n).flat(), error);
      return 'ok';
    }
  }
  return 'ok';
}

async function sendWave(sub: FencedSubBulk, wave: readonly KeyedBulkItem[]): Promise<SubBulkOutcome> {
  let pending = wave;
  for (let tries = 1; pending.length > 0; tries++) {
    pending = withUsableLocks(sub, pending);
    if (pending.length === 0) return 'ok';
    const fences = await readFences(sub, pending);
    const outcome = await sub.send(pending, fencedBulkBody(sub.run.exchange.body, pending, fences), locksOf(sub, pending));
    if (outcome !== 'ok') return outcome;
    const refused = refusedUnderUsableLocks(sub, fences);
    if (tries >= MAX_FENCED_TRIES) return 'ok';
    pending = pending.filter((keyed) => refused.has(keyed.item.position));
  }
  return 'ok';
}

/** Items whose lock was lost meanwhile are answered 503 and not sent (never unlocked, never unfenced). */
function withUsableLocks(sub: FencedSubBulk, items: readonly KeyedBulkItem[]): KeyedBulkItem[] {
  const usable: KeyedBulkItem[] = [];
  for (const keyed of items) {
    const lock = keyed.key === null ? undefined : sub.locks.get(keyString(keyed.key));
    if (keyed.key === null || lock?.usable() === true) usable.push(keyed);
    else recordFailure(sub.run, [keyed], sub.lostError(keyed.key));
  }
  return usable;
}

async function readFences(sub: FencedSubBulk, items: readonly KeyedBulkItem[]): Promise<Fences> {
  const fenceable = items.flatMap((keyed) => sub.fenceable.get(keyed.item.position) ?? []);
  const fences: Fences = new Map();
  if (fenceable.length === 0) return fences;
  const { deps, exchange } = sub.run;
  const urlRouting = queryParams(exchange.req.url ?? '/').get('routing') ?? null;
  const targets = await Promise.all(
    fenceable.map(async ({ keyed, routing }) => {
      // Under held locks: no wait for a date-math boundary, the name as Elasticsearch evaluates it now.
      const names = await deps.aliases.resolveName(keyed.item.index, { settle: false });
      return { index: names.readIndex, id: keyed.item.id ?? '', routing: writeRoutingOf(routing, urlRouting, names.indexRouting) };
    }),
  );
  const states = await deps.fenceReader.readMany(targets, exchange.req.headers.authorization);
  fenceable.forEach((item, n) => {
    const state = states[n];
    const fence = state === undefined ? null : fenceFor(item.action, state);
    if (fence !== null) fences.set(item.keyed.item.position, { fenceable: item, fence });
  });
  return fences;
}

/**
 * Positions of fenced items refused 409 while their lock is still usable (to be read and sent
 * again); those refused after their lock was lost are reported as fenced stale writes.
 */
function refusedUnderUsableLocks(sub: FencedSubBulk, fences: Fences): Set<number> {
  const retry = new Set<number>();
  for (const [position, { fenceable }] of fences) {
    const conflict = conflictOfItem(sub.run.results.get(position));
    const key = fenceable.keyed.key;
    if (conflict === null || key === null) continue;
    if (sub.locks.get(keyString(key))?.usable() === true) retry.add(position);
    else sub.run.deps.observer.fencedWrite({ requestId: sub.run.exchange.requestId, index: key.index, id: key.id, action: fenceable.action, reason: conflict });
  }
  return retry;
}

function locksOf(sub: FencedSubBulk, items: readonly KeyedBulkItem[]): HeldLock[] {
  const locks = new Set<HeldLock>();
  for (const keyed of items) {
    const lock = keyed.key === null ? undefined : sub.locks.get(keyString(keyed.key));
    if (lock !== undefined) locks.add(lock);
  }
  return [...locks];
}
