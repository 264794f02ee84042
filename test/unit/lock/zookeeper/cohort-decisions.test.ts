import { describe, expect, it } from 'vitest';
import { holdsLock, mayHoldPrivateLock, mayKeepLock, mustReadQueueAgain } from '../../../../src/lock/zookeeper/cohort-decisions.js';
import { COHORT_STATES, type CohortState } from '../../../../src/lock/zookeeper/cohort-states.js';

const prefixes = { foreground: 'A', background: 'B' };
const FG = 0;
const BG = 1;

describe('do I hold the lock (holdsLock)', () => {
  it.each(COHORT_STATES.map((state) => [state, state === 'held' || state === 'idle'] as const))('%s → %s', (state, expected) => {
    expect(holdsLock(state)).toBe(expected);
  });
});

describe('may privateLock be ours now (mayHoldPrivateLock)', () => {
  const creating: readonly CohortState[] = ['fastPath', 'arbitrating', 'recovering'];
  const rows = COHORT_STATES.flatMap((state) =>
    [false, true].flatMap((owns) => [false, true].map((uncertain) => [state, owns, uncertain, owns || uncertain || creating.includes(state)] as const)),
  );
  it.each(rows)('state %s, owns %s, uncertain %s → %s', (state, owns, uncertain, expected) => {
    expect(mayHoldPrivateLock(state, owns, uncertain)).toBe(expected);
  });
});

describe('may I keep the privateLock I own (mayKeepLock)', () => {
  it.each([
    // [what, children, our entry, its rank, best local rank, keep]
    ['nobody queued, no entry of ours', ['privateLock'], null, Infinity, FG, true],
    ['another foreground entry, no entry of ours, foreground waiter', ['privateLock', 'A-0000000001'], null, Infinity, FG, false],
    ['another background entry, no entry of ours, foreground waiter', ['privateLock', 'B-0000000001'], null, Infinity, FG, true],
    ['another background entry, no entry of ours, background waiter', ['privateLock', 'B-0000000001'], null, Infinity, BG, false],
    ['our entry first at the waiter\'s rank', ['privateLock', 'A-0000000001', 'A-0000000002'], 'A-0000000001', FG, FG, true],
    ['our entry behind another at the waiter\'s rank', ['privateLock', 'A-0000000001', 'A-0000000002'], 'A-0000000002', FG, FG, false],
    ['our background entry first, a foreground entry behind it in service order', ['B-0000000001', 'A-0000000002'], 'B-0000000001', BG, BG, false],
    // A foreground entry of ours left for a background waiter gives no place: every other entry of rank ≤ 1 counts.
    ['our foreground entry first, background waiter, another background entry', ['A-0000000001', 'B-0000000002'], 'A-0000000001', FG, BG, false],
    ['our foreground entry first, background waiter, nobody else', ['A-0000000001'], 'A-0000000001', FG, BG, true],
    // Our entry deleted meanwhile (by hand, or by a forced release of the holder before us): it gives no place either.
    ['our entry gone from the queue, another entry of our rank there', ['privateLock', 'B-2147483646'], 'B-2147483647', BG, BG, false],
    ['our entry gone from the queue, nobody else of our rank', ['privateLock', 'B-2147483646'], 'A-0000000001', FG, FG, true],
  ] as const)('%s → %s', (_what, children, entry, entryRank, rank, keep) => {
    expect(mayKeepLock({ children, entry, entryRank, rank, prefixes })).toBe(keep);
  });
});

describe('must I read the queue again before serving (mustReadQueueAgain)', () => {
  it.each([
    ['nobody to serve', undefined, 3, 'background', false],
    ['a foreground request that arrived after the read', { priority: 'foreground', arrival: 5 }, 3, 'foreground', false],
    ['a background request that arrived before a read made for a background request', { priority: 'background', arrival: 3 }, 3, 'background', false],
    ['a background request that arrived after the read', { priority: 'background', arrival: 4 }, 3, 'background', true],
    // The read placed a foreground request, which may pass background entries: it says nothing of
    // where a background request stands among them.
    ['a background request served on a read made for a foreground request', { priority: 'background', arrival: 2 }, 3, 'foreground', true],
  ] as const)('%s → %s', (_what, next, arrivalsAtQueueRead, readFor, expected) => {
    expect(mustReadQueueAgain(next, { arrivals: arrivalsAtQueueRead, priority: readFor })).toBe(expected);
  });
});
