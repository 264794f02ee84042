import { describe, expect, it } from 'vitest';
import type { HeldLock, LockEngine, LockKey, Priority } from '../../../src/lock/lock-engine.js';
import { LockTimeoutError, LockUnavailableError } from '../../../src/lock/lock-errors.js';

/**
 * Semantics every LockEngine must show, run against the in-memory engine (unit) and against
 * several ZooKeeper engines with separate sessions (integration). `engines(n)` returns n engines
 * sharing one backend (the same instance n times for the memory engine).
 */
export interface SuiteTarget {
  readonly name: string;
  engines(count: number): Promise<LockEngine[]>;
  /** A fresh index name so tests never see each other's keys. */
  index(): string;
}

export const owner = (requestId: string) => ({ host: 'test-host', pid: 4242, requestId });

export async function waitFor(condition: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function queueLength(engine: LockEngine, key: LockKey): Promise<number> {
  return (await engine.inspect(key)).queue.length;
}

export function runLockEngineSuite(target: SuiteTarget): void {
  describe(`LockEngine semantics: ${target.name}`, () => {
    it('never lets two acquirers hold a key at once (several engines, concurrent acquirers)', async () => {
      const engines = await target.engines(3);
      const key = { index: target.index(), id: 'shared' };
      let inside = 0;
      let overlaps = 0;
      let granted = 0;
      const worker = async (engine: LockEngine, n: number): Promise<void> => {
        for (let i = 0; i < 8; i++) {
          const priority: Priority = (i + n) % 3 === 0 ? 'foreground' : 'background';
          const held = await engine.acquire(key, priority, { timeoutMs: 20_000, owner: owner(`w${n}-${i}`) });
          inside++;
          if (inside > 1) overlaps++;
          granted++;
          await new Promise((resolve) => setImmediate(resolve));
          inside--;
          await held.release();
        }
      };
      await Promise.all(engines.flatMap((engine, e) => [0, 1, 2].map((w) => worker(engine, e * 3 + w))));
      expect(overlaps).toBe(0);
      expect(granted).toBe(72);
      expect((await engines[0]!.inspect(key)).holder).toBeNull();
    });

    it('serves a queued foreground before a queued background, but never preempts the holder', async () => {
      const [a, b, c] = await target.engines(3);
      const key = { index: target.index(), id: 'prio' };
      const holder = await a!.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('holder') });
      const order: string[] = [];
      const background = b!.acquire(key, 'background', { timeoutMs: 5_000, owner: owner('bg') }).then((h) => (order.push('bg'), h));
      await waitFor(async () => (await queueLength(a!, key)) === 1);
      const foreground = c!.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('fg') }).then((h) => (order.push('fg'), h));
      await waitFor(async () => (await queueLength(a!, key)) === 2);
      const inspection = await a!.inspect(key);
      expect(inspection.holder?.owner.requestId).toBe('holder');
      expect(inspection.queue.map((w) => w.priority)).toEqual(['foreground', 'background']);
      expect(holder.lost.aborted).toBe(false);
      expect(order).toEqual([]);
      await holder.release();
      const fg = await foreground;
      expect(order).toEqual(['fg']);
      expect(fg.queuePositionOnArrival).toBeGreaterThan(0);
      await fg.release();
      await (await background).release();
      expect(order).toEqual(['fg', 'bg']);
    });

    it('is FIFO within a priority', async () => {
      const engines = await target.engines(4);
      const key = { index: target.index(), id: 'fifo' };
      const holder = await engines[0]!.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('holder') });
      const order: number[] = [];
      const waiters: Promise<HeldLock>[] = [];
      for (let i = 1; i <= 3; i++) {
        waiters.push(engines[i]!.acquire(key, 'background', { timeoutMs: 5_000, owner: owner(`w${i}`) }).then((h) => (order.push(i), h)));
        await waitFor(async () => (await queueLength(engines[0]!, key)) === i);
      }
      await holder.release();
      for (const waiter of waiters) await (await waiter).release();
      expect(order).toEqual([1, 2, 3]);
    });

    it('times out with LOCK_TIMEOUT and leaves no queue entry behind', async () => {
      const [a, b] = await target.engines(2);
      const key = { index: target.index(), id: 'timeout' };
      const holder = await a!.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('holder') });
      const started = Date.now();
      const error = await b!.acquire(key, 'background', { timeoutMs: 150, owner: owner('late') }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockTimeoutError);
      expect((error as LockTimeoutError).code).toBe('LOCK_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(2_000);
      expect((await a!.inspect(key)).queue).toEqual([]);
      await holder.release();
    });

    it('leaves the queue at once when the signal aborts', async () => {
      const [a, b] = await target.engines(2);
      const key = { index: target.index(), id: 'abort' };
      const holder = await a!.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('holder') });
      const controller = new AbortController();
      const waiting = b!.acquire(key, 'foreground', { timeoutMs: 10_000, owner: owner('w'), signal: controller.signal });
      await waitFor(async () => (await queueLength(a!, key)) === 1);
      const reason = new Error('client went away');
      controller.abort(reason);
      await expect(waiting).rejects.toBe(reason);
      expect((await a!.inspect(key)).queue).toEqual([]);
      await holder.release();
      const next = await b!.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('next') });
      await next.release();
    });

    it('describes the holder in inspect and lists held keys of an index', async () => {
      const [a] = await target.engines(1);
      const index = target.index();
      const held = await a!.acquire({ index, id: 'x' }, 'background', { timeoutMs: 2_000, owner: owner('r1'), message: 'PUT /i/_doc/x' });
      const inspection = await a!.inspect({ index, id: 'x' });
      expect(inspection.holder).toMatchObject({ owner: owner('r1'), priority: 'background', message: 'PUT /i/_doc/x' });
      expect(Math.abs(inspection.holder!.since - held.acquiredAt)).toBeLessThan(1_000);
      const listed = await a!.listHeld(index, 10);
      expect(listed.map((l) => l.key.id)).toEqual(['x']);
      await held.release();
      await held.release();
      expect(await a!.listHeld(index, 10)).toEqual([]);
    });

    it('maps awkward ids to distinct locks and gives them back intact', async () => {
      const [a, b] = await target.engines(2);
      const index = target.index();
      const ids = ['a/b', 'a%2Fb', '..', '.', 'ünïcödé', '😀 non-BMP', 'ctl\u0000\u0007\n', 'x'.repeat(512), 'é'.repeat(256)];
      const held = await Promise.all(ids.map((id) => a!.acquire({ index, id }, 'foreground', { timeoutMs: 2_000, owner: owner(id) })));
      for (const id of ids) {
        const error = await b!.acquire({ index, id }, 'foreground', { timeoutMs: 50, owner: owner('other') }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockTimeoutError);
      }
      const listed = await a!.listHeld(index, 100);
      expect(listed.map((l) => l.key.id).sort()).toEqual([...ids].sort());
      await Promise.all(held.map((h) => h.release()));
    });

    it('acquireEach grants free keys at once and contended ones as they come, without holding while waiting', async () => {
      const [a, b] = await target.engines(2);
      const index = target.index();
      const [k1, k2] = [{ index, id: '1' }, { index, id: '2' }];
      const blocker = await a!.acquire(k2, 'foreground', { timeoutMs: 2_000, owner: owner('blocker') });
      const granted: string[] = [];
      const done = b!.acquireEach([k2, k1, k1], 'background', {
        timeoutMs: 10_000,
        owner: owner('bulk'),
        onGranted: (lock) => {
          granted.push(lock.key.id);
          void lock.release();
        },
      });
      // k1 is granted (and released) while k2 is still held by somebody else.
      await waitFor(() => granted.includes('1'));
      expect(granted).toEqual(['1']);
      await blocker.release();
      const result = await done;
      expect(result.failed.size).toBe(0);
      expect(granted).toEqual(['1', '2']);
    });

    it('acquireEach groups with crossed key sets both complete (nothing held while waiting)', async () => {
      const engines = await target.engines(3);
      const index = target.index();
      const keys = Array.from({ length: 6 }, (_, i) => ({ index, id: `k${i}` }));
      const holders = new Map<string, number>();
      let overlaps = 0;
      const caller = async (engine: LockEngine, n: number): Promise<void> => {
        for (let round = 0; round < 4; round++) {
          const mine = keys.filter((_, i) => (i + n + round) % 3 !== 0);
          const ordered = n % 2 === 0 ? mine : [...mine].reverse();
          const seen: string[] = [];
          const result = await engine.acquireEach(ordered, 'background', {
            timeoutMs: 20_000,
            owner: owner(`m${n}`),
            onGranted: (lock) => {
              seen.push(lock.key.id);
              const count = (holders.get(lock.key.id) ?? 0) + 1;
              holders.set(lock.key.id, count);
              if (count > 1) overlaps++;
              setImmediate(() => {
                holders.set(lock.key.id, holders.get(lock.key.id)! - 1);
                void lock.release();
              });
            },
          });
          expect(result.failed.size).toBe(0);
          expect([...seen].sort()).toEqual(mine.map((k) => k.id).sort());
        }
      };
      await Promise.all(engines.flatMap((engine, e) => [0, 1].map((w) => caller(engine, e * 2 + w))));
      expect(overlaps).toBe(0);
    });

    it('acquireEach reports each key either granted or failed with its reason, duplicates once', async () => {
      const [a, b] = await target.engines(2);
      const index = target.index();
      const [k1, k2, k3] = [{ index, id: '1' }, { index, id: '2' }, { index, id: '3' }];
      const blocker = await a!.acquire(k2, 'foreground', { timeoutMs: 2_000, owner: owner('blocker') });
      const granted: HeldLock[] = [];
      const result = await b!.acquireEach([k3, k2, k1, k2], 'background', {
        timeoutMs: 200,
        owner: owner('bulk'),
        onGranted: (lock) => granted.push(lock),
      });
      expect(granted.map((h) => h.key.id).sort()).toEqual(['1', '3']);
      expect([...result.failed.keys()]).toEqual([`${index}/2`]);
      expect(result.failed.get(`${index}/2`)?.error).toBeInstanceOf(LockTimeoutError);
      expect((await a!.inspect(k2)).queue).toEqual([]);
      await Promise.all(granted.map((h) => h.release()));
      const k1Again = await a!.acquire(k1, 'foreground', { timeoutMs: 1_000, owner: owner('after') });
      await k1Again.release();
      await blocker.release();
    });

    it('acquireEach fails the keys still waiting with the signal\'s reason when it aborts', async () => {
      const [a, b] = await target.engines(2);
      const index = target.index();
      const [free, taken] = [{ index, id: 'free' }, { index, id: 'taken' }];
      const blocker = await a!.acquire(taken, 'foreground', { timeoutMs: 2_000, owner: owner('blocker') });
      const controller = new AbortController();
      const granted: HeldLock[] = [];
      const done = b!.acquireEach([free, taken], 'foreground', {
        timeoutMs: 10_000,
        owner: owner('bulk'),
        signal: controller.signal,
        onGranted: (lock) => granted.push(lock),
      });
      await waitFor(() => granted.length === 1);
      await waitFor(async () => (await queueLength(a!, taken)) === 1);
      const reason = new Error('client went away');
      controller.abort(reason);
      const result = await done;
      expect(result.failed.get(`${index}/taken`)?.error).toBe(reason);
      expect((await a!.inspect(taken)).queue).toEqual([]);
      await granted[0]!.release();
      await blocker.release();
    });

    it('hands the lock to a waiter of the same engine with the same fencing token, a fresh one after handOver: false', async () => {
      const [a] = await target.engines(1);
      const key = { index: target.index(), id: 'cohort' };
      const first = await a!.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('first') });
      expect(first.handedOverLocally).toBe(false);
      const secondWaiting = a!.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('second') });
      const thirdWaiting = a!.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('third') });
      await first.release();
      const second = await secondWaiting;
      expect(second.handedOverLocally).toBe(true);
      expect(second.fencingToken).toBe(first.fencingToken);
      await second.release({ handOver: false });
      const third = await thirdWaiting;
      expect(third.handedOverLocally).toBe(false);
      expect(third.fencingToken).toBeGreaterThan(second.fencingToken);
      await third.release();
    });

    it('releaseInBackground gives a bulk\'s keys back for other engines to take, and a later release() does not wait', async () => {
      const [a, b] = await target.engines(2);
      const index = target.index();
      const keys = Array.from({ length: 20 }, (_, i) => ({ index, id: `bg-${i}` }));
      const held: HeldLock[] = [];
      const first = await a!.acquireEach(keys, 'background', { timeoutMs: 5_000, owner: owner('bulk-a'), onGranted: (lock) => held.push(lock) });
      expect(first.failed.size).toBe(0);
      expect(held).toHaveLength(20);
      for (const lock of held) lock.releaseInBackground();
      for (const lock of held) lock.releaseInBackground();
      await expect(held[0]!.release()).resolves.toBeUndefined();
      const again: HeldLock[] = [];
      const second = await b!.acquireEach(keys, 'background', { timeoutMs: 5_000, owner: owner('bulk-b'), onGranted: (lock) => again.push(lock) });
      expect(second.failed.size).toBe(0);
      expect(again.map((lock) => lock.key.id).sort()).toEqual(keys.map((key) => key.id).sort());
      for (const lock of again) lock.releaseInBackground();
      await waitFor(() => a!.activity().held === 0 && b!.activity().held === 0);
      // What the lock service shows: every key free again, in every engine.
      await waitFor(async () => (await Promise.all(keys.map((key) => a!.inspect(key)))).every((view) => view.holder === null));
    });

    it('releaseInBackground hands the lock to a waiter of the same engine, as release() does', async () => {
      const [a] = await target.engines(1);
      const key = { index: target.index(), id: 'bg-cohort' };
      const first = await a!.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('first') });
      const secondWaiting = a!.acquire(key, 'background', { timeoutMs: 5_000, owner: owner('second') });
      await waitFor(() => a!.activity().waiting === 1);
      first.releaseInBackground();
      const second = await secondWaiting;
      expect(second.handedOverLocally).toBe(true);
      expect(second.fencingToken).toBe(first.fencingToken);
      await second.release();
      expect((await a!.inspect(key)).holder).toBeNull();
    });

    it('issues fencing tokens that grow across grants of one key', async () => {
      const engines = await target.engines(3);
      const key = { index: target.index(), id: 'tokens' };
      const tokens: number[] = [];
      for (let i = 0; i < 6; i++) {
        const held = await engines[i % engines.length]!.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner(`t${i}`) });
        tokens.push(held.fencingToken);
        expect(held.handedOverLocally).toBe(false);
        await held.release();
      }
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
    });

    it('usable() and untilUsable() follow the lock: usable while held, lost after a forced release', async () => {
      const [a, b] = await target.engines(2);
      const key = { index: target.index(), id: 'usable' };
      const held = await a!.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('u') });
      expect(held.usable()).toBe(true);
      await held.untilUsable();
      await b!.forceRelease(key);
      await waitFor(() => held.lost.aborted);
      expect(held.usable()).toBe(false);
      await expect(held.untilUsable()).rejects.toMatchObject({ code: 'LOCK_LOST' });
      await held.release();
      const next = await b!.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('next') });
      expect(next.usable()).toBe(true);
      await next.release();
      expect(next.usable()).toBe(false);
    });

    it('counts held and waiting requests in activity()', async () => {
      const [a] = await target.engines(1);
      const key = { index: target.index(), id: 'activity' };
      const before = a!.activity();
      const held = await a!.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('h') });
      const waiting = a!.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('w') });
      await waitFor(() => a!.activity().waiting === before.waiting + 1);
      expect(a!.activity().held).toBe(before.held + 1);
      await held.release();
      const next = await waiting;
      expect(a!.activity()).toEqual({ held: before.held + 1, waiting: before.waiting });
      await next.release();
      expect(a!.activity()).toEqual(before);
    });

    it('forceRelease aborts the holder\'s lost signal and lets the next waiter in', async () => {
      const [a, b] = await target.engines(2);
      const key = { index: target.index(), id: 'force' };
      expect(await a!.forceRelease(key)).toBe(false);
      const holder = await a!.acquire(key, 'background', { timeoutMs: 2_000, owner: owner('stuck') });
      const next = b!.acquire(key, 'foreground', { timeoutMs: 5_000, owner: owner('next') });
      await waitFor(async () => (await queueLength(a!, key)) === 1);
      expect(await b!.forceRelease(key)).toBe(true);
      await waitFor(() => holder.lost.aborted);
      expect((holder.lost.reason as { code?: string }).code).toBe('LOCK_LOST');
      const nextHeld = await next;
      await holder.release();
      expect((await a!.inspect(key)).holder?.owner.requestId).toBe('next');
      await nextHeld.release();
    });

    it('close releases everything and rejects later acquisitions', async () => {
      const [a] = await target.engines(1);
      const closing = await target.engines(1);
      const engine = closing[0]!;
      const key = { index: target.index(), id: 'close' };
      await engine.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('c') });
      await engine.close();
      expect(engine.state()).toBe('closed');
      await expect(engine.acquire(key, 'foreground', { timeoutMs: 100, owner: owner('c') })).rejects.toBeInstanceOf(LockUnavailableError);
      const after = await a!.acquire(key, 'foreground', { timeoutMs: 2_000, owner: owner('after') });
      await after.release();
    });
  });
}
