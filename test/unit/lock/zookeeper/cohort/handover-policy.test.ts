import { describe, expect, it } from 'vitest';
import { type ForeignQueue, HandOverWindow, decideHandOver } from '../../../../../src/lock/zookeeper/cohort/handover-policy.js';

const bounds = { maxCount: 4, maxMs: 100 };
const unknown: ForeignQueue = { known: false, watched: false, asOf: 0, count: 0, bestRank: Number.POSITIVE_INFINITY };
const seenEmptyAt = (asOf: number): ForeignQueue => ({ known: true, watched: true, asOf, count: 0, bestRank: Number.POSITIVE_INFINITY });
const grantRead: ForeignQueue = { known: true, watched: false, asOf: 0, count: 0, bestRank: Number.POSITIVE_INFINITY };

function decide(window: HandOverWindow, foreign: ForeignQueue, now: number, nextRank = 0): 'handOver' | 'yield' {
  window.catchUp(foreign);
  return decideHandOver({ handOverAllowed: true, nextRank, foreign, handOvers: window.count, msInWindow: window.msSinceStart(now) }, bounds);
}

describe('the hand-over window', () => {
  it('counts passes since the grant while the queue was only read without the watch', () => {
    const window = new HandOverWindow();
    window.restart(1_000);
    for (let pass = 0; pass < bounds.maxCount; pass++) {
      expect(decide(window, grantRead, 1_001 + pass)).toBe('handOver');
      window.record(1_001 + pass);
    }
    expect(decide(window, grantRead, 1_010)).toBe('yield');
  });

  it('restarts at the send of a later watched read that showed nobody else, keeping passes made after that send', () => {
    const window = new HandOverWindow();
    window.restart(1_000);
    for (const at of [1_001, 1_002, 1_003, 1_004]) window.record(at);
    // The read was sent at 1_003: the passes at 1_003 and 1_004 may have come after an entry it could not show.
    expect(decide(window, seenEmptyAt(1_003), 1_005)).toBe('handOver');
    expect(window.count).toBe(2);
    expect(window.msSinceStart(1_005)).toBe(2);
  });

  it('never restarts on the same read twice: with no newer look, the bound runs out (a silent link)', () => {
    const window = new HandOverWindow();
    window.restart(1_000);
    const lastLook = seenEmptyAt(1_001);
    let passes = 0;
    for (let now = 1_002; decide(window, lastLook, now) === 'handOver'; now++) {
      window.record(now);
      passes++;
    }
    expect(passes).toBe(bounds.maxCount);
  });

  it('yields when the window is older than max.ms, however few the passes', () => {
    const window = new HandOverWindow();
    window.restart(1_000);
    expect(decide(window, seenEmptyAt(1_000), 1_000 + bounds.maxMs)).toBe('yield');
    expect(decide(window, seenEmptyAt(1_050), 1_000 + bounds.maxMs)).toBe('handOver');
  });

  it('asks for a fresh look once half the window is used', () => {
    const window = new HandOverWindow();
    window.restart(1_000);
    expect(window.halfUsed(1_001, bounds)).toBe(false);
    window.record(1_001);
    window.record(1_002);
    expect(window.halfUsed(1_002, bounds)).toBe(true);
    window.restart(2_000);
    expect(window.halfUsed(2_000 + bounds.maxMs / 2, bounds)).toBe(true);
  });
});

describe('the hand-over decision', () => {
  it('yields a background hand-over while the queue is unknown, and to a foreground entry elsewhere', () => {
    const window = new HandOverWindow();
    window.restart(1_000);
    expect(decide(window, unknown, 1_001, 1)).toBe('yield');
    expect(decide(window, unknown, 1_001, 0)).toBe('handOver');
    const foregroundElsewhere: ForeignQueue = { known: true, watched: true, asOf: 1_000, count: 1, bestRank: 0 };
    expect(decide(window, foregroundElsewhere, 1_001, 1)).toBe('yield');
  });

  it('yields when the releasing holder asked not to hand over', () => {
    expect(decideHandOver({ handOverAllowed: false, nextRank: 0, foreign: seenEmptyAt(1), handOvers: 0, msInWindow: 0 }, bounds)).toBe('yield');
  });
});
