import { describe, expect, it } from 'vitest';
import { ContainerCache, ContentionHints } from '../../../../src/lock/zookeeper/queue/containers.js';
import { RecentReleases } from '../../../../src/lock/zookeeper/cohort/recent-releases.js';

/** The engine's bounded memories of documents: past their capacity, the least recently set go first. */
describe('bounded document memories', () => {
  it('ContainerCache forgets the least recently remembered container past its capacity', () => {
    const cache = new ContainerCache(3);
    for (const path of ['/a', '/b', '/c']) cache.remember(path);
    cache.isKnown('/a');
    cache.remember('/b');
    cache.remember('/d');
    // A look-up does not keep /a; remembering /b again does.
    expect(['/a', '/b', '/c', '/d'].map((path) => cache.isKnown(path))).toEqual([false, true, true, true]);
  });

  it('ContentionHints keeps at most its capacity of marked documents, the latest marks', () => {
    const hints = new ContentionHints(60_000, 2);
    hints.mark('/a');
    hints.mark('/b');
    hints.mark('/a');
    hints.mark('/c');
    expect(['/a', '/b', '/c'].map((path) => hints.contended(path))).toEqual([true, false, true]);
  });

  it('RecentReleases keeps at most its capacity of released documents, the latest releases', () => {
    const releases = new RecentReleases(60_000, 2);
    const now = Date.now();
    for (const path of ['/a', '/b', '/c']) releases.noteReleased(path, now);
    expect(['/a', '/b', '/c'].map((path) => releases.releasedAgoMs(path, now))).toEqual([Number.POSITIVE_INFINITY, 0, 0]);
  });

  it('RecentReleases tells how long ago a document was released, within its window only', () => {
    const releases = new RecentReleases(1_000, 10);
    releases.noteReleased('/a', 0);
    expect([releases.releasedAgoMs('/a', 50), releases.releasedAgoMs('/a', 1_000), releases.releasedAgoMs('/a', 1_001)]).toEqual([50, 1_000, Number.POSITIVE_INFINITY]);
    expect(releases.releasedAgoMs('/b', 0)).toBe(Number.POSITIVE_INFINITY);
  });
});
