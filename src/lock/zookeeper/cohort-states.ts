import { ProxyError } from '../../errors/proxy-error.js';

/**
 * The states of this process's hold on one document (a lock cohort) and every move between them,
 * as data: the document lock asks this table for each move, so a move nobody wrote down is a bug
 * that shows at once, and docs/lock-protocol.md's diagram is checked against it.
 * - `fastPath`    one round trip tries privateLock directly (or a batch transaction does);
 * - `queued`      our entry is in the queue, we watch our predecessor (or privateLock at the head);
 * - `arbitrating` at the head: trying to create privateLock;
 * - `held`        privateLock is ours; one local request holds it, the others wait for a hand-over;
 * - `idle`        privateLock is ours and no local request holds or wants it: kept for
 *                 `zookeeper.lock.linger.ms` for the next one, given up when another process queues;
 * - `yielding`    giving privateLock back and re-queuing behind other processes in one transaction;
 * - `recovering`  a reply was lost: reading what ZooKeeper holds before going on;
 * - `lost`        held, but no longer vouched for (margin, forced release): nothing is handed over;
 * - `releasing`   the compare-and-delete of what is ours is on its way;
 * - `released`    finished; new requests for the key start a new document lock.
 */
export type CohortState = 'fastPath' | 'queued' | 'arbitrating' | 'held' | 'idle' | 'yielding' | 'recovering' | 'lost' | 'releasing' | 'released';

export const COHORT_STATES: readonly CohortState[] = ['fastPath', 'queued', 'arbitrating', 'held', 'idle', 'yielding', 'recovering', 'lost', 'releasing', 'released'];

/** What happens to a document lock; each names the step that starts or the news that came. */
export type CohortEvent =
  /** The fast path's round trip goes out: read the queue and create privateLock. */
  | 'tryFastPath'
  /** Our queue entry's create goes out (first time, or again after it went). */
  | 'enterQueue'
  /** We look at our place in the queue and wait for the one ahead. */
  | 'evaluate'
  /** At the head with privateLock free: its create goes out. */
  | 'arbitrate'
  /** A reply was lost: read what of ours ZooKeeper holds before going on. */
  | 'recover'
  /** privateLock is ours and nobody is served before us: the first local request holds it. */
  | 'grant'
  /** The last local holder is done and the lock is worth keeping a moment. */
  | 'linger'
  /** A local request arrived while the lock lingered. */
  | 'resume'
  /** Lingering is over (its time, another process queued, the engine closing): the release follows. */
  | 'lingerEnded'
  /** Others wait and the hand-over bound is reached: re-queue and give privateLock back. */
  | 'requeue'
  /** The re-queue transaction was refused by one of its checks: privateLock is not vouched for. */
  | 'requeueRefused'
  /** The safety margin passed, or privateLock was force-released: stop vouching for it. */
  | 'lose'
  /** Nobody here wants the lock (or it is lost): the compare-and-delete goes out. */
  | 'finish'
  /** Released, or the session ended: nothing of ours is left. */
  | 'end';

/**
 * The acquisition loop's next step: the event it is about to apply (`tryFastPath`, `enterQueue`,
 * `evaluate`, `arbitrate`, `recover`, `grant`, `finish`), or one of the loop's own reads and
 * writes that move no state — `readQueue` (read the children again), `rerank` (move our entry to
 * the best local request's rank) — or `stop` (the lock is held, given back, or the session gone).
 */
export type LoopStep = Extract<CohortEvent, 'tryFastPath' | 'enterQueue' | 'evaluate' | 'arbitrate' | 'recover' | 'grant' | 'finish'> | 'readQueue' | 'rerank' | 'stop';

/**
 * The one way a document lock gives the lock back to ZooKeeper, by what it does:
 * - `finish`      nobody here wants it: compare-and-delete privateLock and our entry (coalesced
 *                 with other releases when nobody else is known to wait), then the lock is done;
 * - `lingerEnded` lingering is over (its time, another process queued, the engine closing):
 *                 `finish` from `idle`;
 * - `requeue`     others wait and the hand-over bound is reached: one transaction re-queues us at
 *                 our best local rank and gives privateLock back, so our waiters queue behind them;
 * - `stepBack`    we created privateLock but somebody is served before us: delete it, keep our place;
 * - `dropLost`    the lock is lost: delete what is still ours and never hand it over; the waiters
 *                 start again with a fresh acquisition, ordered after this release.
 * The first three are the events they apply. Each release is a compare-and-delete guarded by the
 * document's version and the forced-release epoch (release-batcher.ts): it never deletes another
 * holder's privateLock.
 */
export type GiveBack = Extract<CohortEvent, 'finish' | 'lingerEnded' | 'requeue'> | 'stepBack' | 'dropLost';

/** Bookkeeping that goes with a move, run right after the state changes. */
export type CohortEffect =
  /** The grant the hold belonged to is over: answers to its reads are stale. */
  | 'newIncarnation'
  /** No linger timer outlives lingering. */
  | 'stopLingerTimer'
  /** Whoever waits for the lock to finish is told. */
  | 'resolveFinished';

export interface Transition {
  readonly from: CohortState;
  readonly event: CohortEvent;
  readonly to: CohortState;
  readonly effects: readonly CohortEffect[];
}

const LOOKING: readonly CohortState[] = ['fastPath', 'queued', 'arbitrating', 'recovering', 'yielding'];

function moves(event: CohortEvent, from: readonly CohortState[], to: CohortState, effects: readonly CohortEffect[] = []): Transition[] {
  return from.map((state) => ({ from: state, event, to, effects }));
}

/** Every move a document lock makes; anything else throws `IllegalCohortTransition`. */
export const TRANSITIONS: readonly Transition[] = [
  // A contended document's lock starts in the queue without a fast path; recovery that found nothing tries it.
  ...moves('tryFastPath', ['fastPath', 'recovering'], 'fastPath'),
  ...moves('enterQueue', LOOKING, 'queued'),
  // After a re-queue the loop reads the queue first, still yielding, then looks at its place.
  ...moves('evaluate', ['queued', 'arbitrating', 'recovering', 'yielding'], 'queued'),
  ...moves('arbitrate', ['queued'], 'arbitrating'),
  ...moves('recover', LOOKING, 'recovering'),
  // A batch transaction grants from `fastPath`. A grant whose answer came after the session ended
  // (`released`) still takes the lock, to give it back at once: nobody waits any more.
  ...moves('grant', ['fastPath', 'arbitrating', 'recovering', 'released'], 'held', ['newIncarnation']),
  ...moves('linger', ['held'], 'idle'),
  ...moves('resume', ['idle'], 'held', ['stopLingerTimer']),
  ...moves('lingerEnded', ['idle'], 'held', ['stopLingerTimer']),
  ...moves('requeue', ['held'], 'yielding', ['newIncarnation']),
  ...moves('requeueRefused', ['yielding'], 'lost'),
  ...moves('lose', ['held'], 'lost'),
  ...moves('lose', ['idle'], 'lost', ['stopLingerTimer']),
  // From `releasing`: a release that failed is tried again by the acquisition loop's last resort.
  ...moves('finish', [...LOOKING, 'held', 'lost', 'releasing'], 'releasing'),
  ...moves('end', COHORT_STATES, 'released', ['stopLingerTimer', 'resolveFinished']),
];

/**
 * By state, then by event: two lookups of constant strings. A key string joined for every move (a
 * bulk's key makes three) was a measurable share of the proxy's CPU per bulk document.
 */
const BY_STATE = new Map<CohortState, Map<CohortEvent, Transition>>();
for (const transition of TRANSITIONS) {
  let byEvent = BY_STATE.get(transition.from);
  if (byEvent === undefined) {
    byEvent = new Map();
    BY_STATE.set(transition.from, byEvent);
  }
  byEvent.set(transition.event, transition);
}

/** The move `event` makes from `from`; undefined when the table has none (the event does not apply there). */
export function transitionOf(from: CohortState, event: CohortEvent): Transition | undefined {
  return BY_STATE.get(from)?.get(event);
}

/** A move the table does not have: a bug in the document lock, never a ZooKeeper condition. */
export class IllegalCohortTransition extends ProxyError {
  constructor(
    readonly from: CohortState,
    readonly event: CohortEvent,
  ) {
    super('INTERNAL', `document lock: no transition for "${event}" in state "${from}"`, { meta: { from, event } });
  }
}

/** The move `event` makes from `from`, or IllegalCohortTransition. */
export function nextTransition(from: CohortState, event: CohortEvent): Transition {
  const transition = transitionOf(from, event);
  if (transition === undefined) throw new IllegalCohortTransition(from, event);
  return transition;
}
