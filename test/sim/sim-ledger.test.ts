import { describe, expect, it } from 'vitest';
import type { HeldLock } from '../../src/lock/lock-engine.js';
import { Ledger, type ServerView } from './sim-ledger.js';

const KEY = { index: 'docs', id: 'd3' };
const HERE = 'session-1';
const ELSEWHERE = 'session-2';
const PASS_BOUND = 2;

/** A server whose zxid the test sets, with one foreground entry of another session queued, and this session's latest read of the queue. */
function serverWith(entryCzxid: number, readAt = 0): ServerView & { zxid: number } {
  return {
    zxid: 0,
    sessionAlive: () => true,
    lastZxid() {
      return this.zxid;
    },
    childrenReadZxid: (sessionId) => (sessionId === HERE ? readAt : 0),
    queue: () => [{ name: 'A-0000000001', czxid: entryCzxid, owner: ELSEWHERE, ctime: 0 }],
    entryHistory: () => [],
  };
}

function backgroundHold(fencingToken: number, handedOverLocally: boolean): HeldLock {
  const lost = new AbortController().signal;
  return {
    key: KEY,
    priority: 'background',
    acquiredAt: 0,
    waitMs: 0,
    queuePositionOnArrival: 0,
    handedOverLocally,
    lost,
    isLost: false,
    fencingToken,
    usable: () => true,
    untilUsable: () => Promise.resolve(),
    release: () => Promise.resolve(),
    releaseInBackground: () => undefined,
  };
}

/** Grants `count` background requests of engine 0, each begun after the entry, one after another. */
function grantInTurn(ledger: Ledger, server: { zxid: number }, fencingToken: number, firstLocal: boolean, count: number): void {
  for (let turn = 0; turn < count; turn++) {
    server.zxid = 30 + turn;
    const wait = ledger.startWait(0, 'docs/d3', 'background', 1_000);
    ledger.settle(wait, null);
    const grant = ledger.granted(0, HERE, backgroundHold(fencingToken, turn > 0 || firstLocal), wait, []);
    ledger.released(grant);
  }
}

describe('the cross-process priority check judges by what the engine could know', () => {
  it('flags a grant through ZooKeeper of a privateLock created after the foreground entry', () => {
    const server = serverWith(10);
    const ledger = new Ledger(() => 0, 1_000, server, PASS_BOUND, 2);
    grantInTurn(ledger, server, 20, false, 1);
    expect(ledger.violations).toEqual(['t=0 priority: docs/d3 granted through ZooKeeper to a background request on engine 0 ahead of foreground entry A-0000000001 queued before it']);
  });

  it('flags a grant through ZooKeeper ahead of an entry the session had read, even under an older privateLock', () => {
    const server = serverWith(25, 26);
    const ledger = new Ledger(() => 0, 1_000, server, PASS_BOUND, 2);
    grantInTurn(ledger, server, 20, false, 1);
    expect(ledger.violations).toEqual(['t=0 priority: docs/d3 granted through ZooKeeper to a background request on engine 0 ahead of foreground entry A-0000000001 queued before it']);
  });

  it('counts the first grant of a privateLock created before an entry not yet read as a pass, bounded like hand-overs', () => {
    const server = serverWith(25, 24);
    const ledger = new Ledger(() => 0, 1_000, server, PASS_BOUND, 2);
    grantInTurn(ledger, server, 20, false, PASS_BOUND);
    expect(ledger.violations).toEqual([]);
    grantInTurn(ledger, server, 20, true, 1);
    expect(ledger.violations).toEqual(['t=0 priority: docs/d3 passed on locally to a background request on engine 0 ahead of foreground entry A-0000000001 (3 times)']);
  });

  it('ignores an entry created after the background request began', () => {
    const server = serverWith(40);
    const ledger = new Ledger(() => 0, 1_000, server, PASS_BOUND, 2);
    grantInTurn(ledger, server, 35, false, 1);
    expect(ledger.violations).toEqual([]);
  });
});

describe('a release that deletes the next holder\'s privateLock after a hand deletion', () => {
  const PRIVATE_LOCK = '/sim/locks/docs/d3/privateLock';

  it('takes the victim\'s grant out of the checks when the deleting session had heard nothing as of the hand deletion', () => {
    const ledger = new Ledger(() => 0, 1_000, serverWith(10), PASS_BOUND, 2);
    ledger.deletedByHand(53, { path: PRIVATE_LOCK, owner: ELSEWHERE, zxid: 40 });
    ledger.foreignLockDeleted(PRIVATE_LOCK, 56, ELSEWHERE, 39);
    expect(ledger.overridden('docs/d3', 56)).toBe(true);
  });

  it('keeps it in the checks when the deleting session had heard of the deletion, or had no privateLock deleted by hand', () => {
    const ledger = new Ledger(() => 0, 1_000, serverWith(10), PASS_BOUND, 2);
    ledger.deletedByHand(53, { path: PRIVATE_LOCK, owner: ELSEWHERE, zxid: 40 });
    ledger.foreignLockDeleted(PRIVATE_LOCK, 56, ELSEWHERE, 40);
    ledger.foreignLockDeleted(PRIVATE_LOCK, 57, HERE, 0);
    expect(ledger.overridden('docs/d3', 56)).toBe(false);
    expect(ledger.overridden('docs/d3', 57)).toBe(false);
  });
});
