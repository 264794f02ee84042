import { describe, expect, it, vi } from 'vitest';
import { simulate } from './sim-run.js';

// Hoisted above the imports: the engine's modules load with the small caches.
vi.mock('lru-cache', async (importOriginal) => (await import('./small-caches.js')).smallCaches(importOriginal));

/** Seeds that found bugs in the engine, or in the checker: each must stay clean. */
describe('simulation regressions', () => {
  // A foreground request's fast path read the queue (one background entry of another process, which
  // a foreground request may pass) and created privateLock; the request timed out before the
  // answer, and the grant went to a background request of the same process waiting since before
  // the read. Served on a read made for a better rank, it passed the older background entry.
  // Found in seed 11408; seed 6672 takes the same path under the current steering, and fails with the break.
  it('reads the queue again before serving a background request on a read made for a foreground one (seed 6672)', async () => {
    const result = await simulate({ seed: 6672 });
    expect(result.violations).toEqual([]);
  });

  // A waiter's queue entry was deleted by hand. When privateLock came free it arbitrated as if its
  // entry were still there: the read did not list it, so nobody seemed ahead, and it kept the lock
  // ahead of another process's older entry of its rank. An entry the read does not list gives no place.
  it('gives privateLock back when the read no longer lists its own entry (seed 6747)', async () => {
    const result = await simulate({ seed: 6747, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('operator deletes /sim/locks/docs/d0/B-2147483647 by hand'))).toBe(true);
  });

  // A bulk's key (no holder watch) lost its privateLock to a deletion by hand; the emptied document
  // node was reaped and created again by another engine, which took the lock. The holder's child
  // watch (a request of its own waited) saw the document deleted, and the engine took no notice: it
  // handed the key on, and the release, its owner token equal to the new node's version, deleted
  // the new holder's privateLock. A document deleted under a held lock now marks the lock lost.
  it('marks a lock lost when its document node is seen deleted (seed 42081)', async () => {
    const result = await simulate({ seed: 42081, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('e2 marks docs/d2 lost'))).toBe(true);
  });

  // A lock lost at the safety margin had its privateLock and then its queue entry deleted by hand;
  // the document node was reaped and created again, and another engine held it. Back on the link,
  // the release was refused at the entry's delete (NONODE), and sent again without it: the owner
  // check passed on the new node's equal version and the delete took the new holder's privateLock.
  // An entry of ours deleted by somebody else now makes the release read privateLock first.
  it('reads privateLock before deleting it when its queue entry was deleted by somebody else (seed 74640)', async () => {
    const result = await simulate({ seed: 74640, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('operator deletes /sim/locks/docs/d0/A-2147483647 by hand'))).toBe(true);
  });

  // The checker, not the engine: a bulk's key whose privateLock had been deleted by hand 3.5 s
  // before was handed on to a single request, watched from the hand-over and lost within a round
  // trip; the hand-deletion bound counted from the deletion, before the request was granted.
  it('counts the hand-deletion bound of a lock handed on from its grant (seed 49231)', async () => {
    const result = await simulate({ seed: 49231 });
    expect(result.violations).toEqual([]);
  });

  // The checker, not the engine: on a slow network a release refused by the epoch check reads its
  // nodes and is sent again, three round trips of up to 60 ms hops each way, past 500 ms.
  it('gives a release that verifies on a slow network its round trips (seed 136908)', async () => {
    const result = await simulate({ seed: 136908 });
    expect(result.violations).toEqual([]);
  });

  // A waiter's arbitration read the queue (NONODE: the document gone) and sent its create, refused
  // (NODEEXISTS: the document reaped and created anew by another process, which held it). The
  // pair fell through to a ZooKeeper error and the request got 503 with the link up all along.
  // It is a reaped document: queue again.
  it('queues again when an arbitration finds its document reaped and created anew (seed 224011)', async () => {
    const result = await simulate({ seed: 224011 });
    expect(result.violations).toEqual([]);
  });

  // A bulk's transaction creates the privateLocks of several documents with one zxid, so a czxid
  // names a privateLock only together with its document: a hand deletion of docs/d1's privateLock
  // was charged to docs/d2's holder with the same czxid (the checker's mistake, not the engine's).
  it('tells apart privateLocks one transaction created (seed 12823)', async () => {
    const result = await simulate({ seed: 12823, trace: true, gate: 0 });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('operator deletes /sim/locks/docs/d1/privateLock (czxid 10) by hand'))).toBe(true);
  });

  // The link went silent while a lock was held; the connect window (connection.retry x delay,
  // 600 ms) ended before the safety margin (a quarter of the 4 s session), the session turned
  // "unavailable", and the margin's timer, which only fired from "suspended", never declared the
  // held lock lost. The server expired the session, another engine took the document, and the
  // holder (never lost) handed the lock on to a local waiter.
  it('declares held locks lost at the safety margin even after the connect window ran out (seed 892)', async () => {
    const result = await simulate({ seed: 892, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('e0 marks docs/d2 lost: ZooKeeper connection suspended past the safety margin'))).toBe(true);
  });

  // An operator's forced release, issued through the holder's own process, reached the process
  // after its cohort had already yielded privateLock: the cohort noted "privateLock gone" anyway and
  // kept the note. It took privateLock again later, and its release then left that privateLock in
  // place: a lock of a live session with no holder, every later request of the document timed out.
  it('releases a privateLock taken after a forced release that came too late to matter (seed 7796)', async () => {
    const result = await simulate({ seed: 7796 });
    expect(result.violations).toEqual([]);
  });

  // A holder's yield (re-queue its background waiter, give privateLock back) was refused as a
  // whole request (THROTTLEDOP). Recovery found privateLock still ours and judged its place by the
  // entry it still had, one a foreground request had left: first in the queue. It kept the lock
  // for the background waiter, ahead of another process's foreground entry queued meanwhile.
  it('gives privateLock back after a refused yield when its old entry outranks every waiter (seed 265)', async () => {
    const result = await simulate({ seed: 265, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => /e1 server multi\[create \/sim\/locks\/docs\/d1\/B-.*-> THROTTLEDOP/.test(line))).toBe(true);
  });

  // The link went silent (not yet noticed) while a lock was held. Its last release let it linger
  // on the grant's own read of the queue (nobody else queued) and armed a child watch whose read
  // never came back. Another process queued a foreground entry meanwhile; each local request of
  // the engine found that stale read "known and empty" and passed the lock on with the hand-over
  // bound restarted, background requests ahead of the entry ten times over ~1.5 s.
  it('restarts the hand-over bound only on a read of the armed child watch, not the grant\'s own (seed 145351)', async () => {
    const result = await simulate({ seed: 145351, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('e1 link cut (notice 2263 ms'))).toBe(true);
    expect(result.trace.some((line) => line.includes('orig server create /sim/locks/docs/d1/A- -> ok'))).toBe(true);
  });

  // A single engine held a document with local requests waiting; its child watch had read the
  // queue empty when its link went silent. Another process queued a foreground entry meanwhile;
  // no watch event could arrive, and the engine went on restarting the hand-over bound on that
  // old empty read, passing the lock to background requests of its own six times over ~1.4 s.
  // The bound now counts from the send of the latest empty read, and a refresh read renews it.
  it('counts the hand-over bound from the send of the latest empty read of the queue, so a silent link cannot extend it (seed 583716)', async () => {
    const result = await simulate({ seed: 583716, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('e0 link cut (notice 2488 ms'))).toBe(true);
    // Its last look at the queue is 220 ms old at the first release after the silence: the lock goes back to the queue.
    expect(result.trace.some((line) => line.includes('705 e0 sends multi[create /sim/locks/docs/d2/A-'))).toBe(true);
  });

  // A foreground request at the head of the queue read the queue and sent its privateLock create;
  // the create travelled slowly and the request timed out meanwhile. Another process queued a
  // foreground entry after the read and before the create reached the server; then a background
  // request of the same engine arrived, and the create's answer gave it the lock — ahead of that
  // entry, on a read made before either. A background request that arrived after the read that
  // placed the lock now makes the engine read the queue again before serving it.
  it('reads the queue again before serving a background request that arrived after the read that placed the grant (seed 92738)', async () => {
    const result = await simulate({ seed: 92738, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('2312 actor e3 acquire docs/d0 background'))).toBe(true);
  });

  // Found by the operator actor. A bulk's key (no holder watch) was held when an operator deleted
  // its privateLock by hand, and another engine took the document. A single request of the
  // holder's process came to wait for the key; the holder's release went the yield way, whose
  // transaction deletes privateLock by name, and deleted the new holder's: a third engine was
  // granted while the new holder still wrote. A yield of a lock no holder watch guards now reads
  // privateLock first.
  it('does not yield a hand-deleted privateLock of a bulk key by name (seed 1885)', async () => {
    const result = await simulate({ seed: 1885, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('operator deletes /sim/locks/docs/d1/privateLock'))).toBe(true);
    expect(result.trace.some((line) => /e2 sends get \/sim\/locks\/docs\/d1\/privateLock/.test(line))).toBe(true);
  });

  // Checker, not engine: a privateLock create (or a batch's create-with-document) reached the
  // server before another process's foreground entry, and its answer travelled slowly. The request
  // it was for gave up meanwhile; a background request of the same engine arrived after the entry
  // existed, and the answer granted it that privateLock. ZooKeeper had ordered the lock first and
  // no read of the queue had shown the entry: it queued behind a holder the engine had not yet
  // heard of, so the grant is a local pass (bounded like a hand-over), not a jump through ZooKeeper.
  it('counts a late-answered privateLock given to a later request as a pass, not a jump (seeds 517282, 537206)', async () => {
    const batch = await simulate({ seed: 517282, trace: true });
    expect(batch.violations).toEqual([]);
    expect(batch.trace.some((line) => /e1 server multi\[create \/sim\/locks\/docs\/d1, .*create \/sim\/locks\/docs\/d3\/privateLock, setData \/sim\/locks\/docs\/d3\] -> committed/.test(line))).toBe(true);
    expect(batch.trace.some((line) => line.includes('e0 server create /sim/locks/docs/d3/A- -> ok'))).toBe(true);
    // Since the fix of seed 92738 the later (background) request is served only after a fresh read:
    // it shows the foreground entry, and privateLock goes to it first (grant and token numbers
    // depend on the rest of the schedule).
    const entered = batch.trace.findIndex((line) => line.includes('e0 server create /sim/locks/docs/d3/A- -> ok'));
    const nextHolder = batch.trace.slice(entered).find((line) => /actor e\d holds docs\/d3 /.test(line));
    expect(nextHolder).toMatch(/actor e0 holds docs\/d3 \(grant \d+, token \d+, local false\)/);

    const single = await simulate({ seed: 537206, trace: true });
    expect(single.violations).toEqual([]);
  });

  // A bulk's read of a known document's queue went out on a stalled link, and its answer came
  // after another process's foreground entry and a new background request of this engine. The
  // batch's create took privateLock on that read and gave it to the new request, ahead of the
  // entry: the placing read was taken as of the create, not as of the read. A batch now notes the
  // read when it goes out, so a request that came after it is served only after a fresh read.
  it('notes a batch\'s placing read when it goes out, not when the create does (seed 237843)', async () => {
    const result = await simulate({ seed: 237843, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('664 actor e1 acquire docs/late background'))).toBe(true);
  });

  // The other half of the batch's placing read: a bulk's read of a known document came back while
  // a foreground request of the bulk waited beside an older background one, and was judged for the
  // foreground request (which passes background entries). The foreground request gave up before
  // the grant; the background one was served on that read, ahead of another process's older
  // background entry the read had listed. The read now places the best rank it was judged for.
  it('serves a background request on a batch\'s read judged for a foreground one only after a fresh read (seed 42505)', async () => {
    const result = await simulate({ seed: 42505, trace: true, gate: 0 });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('1992 actor e3 acquireEach docs/d0,docs/d1,docs/d2 foreground'))).toBe(true);
  });

  // The checker, not the engine: with a request gate of 1 on a slow network, an engine's requests
  // waited in line behind each other, and a wait on a free document passed the progress bound,
  // which is a pipelined link's. The time bounds now count from when no request waits in a gate.
  it('counts the time bounds from when no request waits in a narrow gate (seed 4260)', async () => {
    const result = await simulate({ seed: 4260 });
    expect(result.summary).toContain('gate=1');
    expect(result.violations).toEqual([]);
  });

  // The checker, not the engine. A holder's link stayed down past the margin while an operator
  // deleted its privateLock by hand; the emptied document was reaped and created again by another
  // engine, which took the lock at the same owner token. Back on the link, the engine issued its
  // release, and a request gate of 2 held it while the holder's watch fired "changed"; the release
  // then deleted the new holder's privateLock — the window docs/guarantees.md states, since the
  // engine issued it before it heard. "Sent before it heard" now counts from the engine's issue.
  // (A release issued after such an event, while the watch re-reads, lists the session's nodes
  // first: holder-watch.test.ts.)
  it('counts a release held in a request gate as sent when the engine issued it (seed 152149)', async () => {
    const result = await simulate({ seed: 152149, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('e1 watch changed /sim/locks/docs/d0/privateLock'))).toBe(true);
  });

  // Not a bug found: the seed that, in the npm test budget's stead, takes the path the forced-release
  // epoch check guards (a release sent after an operator force-released its lock and another engine
  // took the document). With the check removed from releases (`scripts/sim-breaks.mjs`) it breaks
  // exclusion; 3 of seeds 2,001–32,000 do, none among the budget's 2,000.
  it('keeps exclusion where a release follows a forced release of its lock (seed 2705)', async () => {
    const result = await simulate({ seed: 2705, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('force-release docs/d0: true'))).toBe(true);
  });

  // Not a bug found: the seed that takes the path seed 6747 found, now that the engine's schedules
  // moved it off that seed. With an entry the read no longer lists keeping its place
  // (`scripts/sim-breaks.mjs`) it breaks first-come order; 1 of seeds 2,001–32,000 does.
  it('gives privateLock back when the read no longer lists its own entry (seed 25610)', async () => {
    const result = await simulate({ seed: 25610, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('operator deletes /sim/locks/docs/d1/A-0000000009 by hand'))).toBe(true);
  });

  // The checker, not the engine: an operator deleted a waiter's queue entry by hand; the holder of
  // the document released and lingered (nobody else seemed queued), and the waiter, watching the
  // node ahead of it, waited out the linger. The progress bound of such a waiter allows the linger.
  it('allows a waiter whose entry was deleted by hand the holder\'s linger (seed 320143)', async () => {
    const result = await simulate({ seed: 320143, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('operator deletes /sim/locks/docs/d0/B-0000000003 by hand'))).toBe(true);
  });

  // Found by the million-seed run. A bulk's key was released (its release waiting for the listing
  // of the session's nodes) and the same process asked for the document again in a new bulk, whose
  // create-with-document went out before the release: the await that orders a batch after this
  // process's releases of its documents had become unreachable code. An operator deleted the old
  // privateLock and the reaper the document node; the new create made both again at the old owner
  // token, and the release then deleted the new holder's privateLock and document.
  it('orders a batch after this process\'s release of the same document (seed 623794)', async () => {
    const result = await simulate({ seed: 623794 });
    expect(result.violations).toEqual([]);
  });

  // The checker, not the engine: found by the million-seed run. A waiter took privateLock a moment
  // and an operator force-released it, which deleted the waiter's queue entry too; the waiter went
  // on watching the entry ahead of its old one. The holder there released and lingered, seeing
  // nobody else queued, and the waiter waited out the linger. Like an entry deleted by hand
  // (seed 320143), an entry a forced release took allows the holder's linger.
  it('allows a waiter whose entry a forced release took the holder\'s linger (seed 861666)', async () => {
    const result = await simulate({ seed: 861666, trace: true });
    expect(result.violations).toEqual([]);
    expect(result.trace.some((line) => line.includes('force-release docs/d2: true'))).toBe(true);
  });
});
