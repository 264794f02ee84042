/**
 * Virtual time for the simulation: the engine's timers (setTimeout, setInterval, setImmediate,
 * AbortSignal.timeout, Date.now) and every simulated network event run on one ordered queue.
 * One callback fires at a time and the promise jobs it started run to the end before the next,
 * as in Node's event loop. vitest's fake timers fire every timer due at one instant back to back
 * (next() then tick(0)) without running promise continuations between them, an interleaving
 * Node never produces, so the simulation keeps its own queue.
 */

interface Entry {
  readonly id: number;
  time: number;
  seq: number;
  readonly callback: () => void;
  /** The delay given at schedule time, for `refresh`. */
  readonly delayMs: number;
  readonly repeatMs: number | null;
  cancelled: boolean;
}

const realSetImmediate = globalThis.setImmediate;

/** Lets every promise job queued so far (and the ones they queue) run. */
export function drainPromiseJobs(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

class VirtualTimer {
  readonly entry: Entry;
  private readonly clock: VirtualClock;

  constructor(entry: Entry, clock: VirtualClock) {
    this.entry = entry;
    this.clock = clock;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  hasRef(): boolean {
    return true;
  }

  refresh(): this {
    this.clock.reschedule(this.entry);
    return this;
  }

  [Symbol.toPrimitive](): number {
    return this.entry.id;
  }
}

export class VirtualClock {
  private current: number;
  private seq = 0;
  private nextId = 1;
  private readonly heap: Entry[] = [];
  private readonly byId = new Map<number, Entry>();

  constructor(startMs: number) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  /** Callbacks still due (cancelled ones not counted once they surface). */
  pending(): number {
    return this.byId.size;
  }

  /** Schedules `callback` `delayMs` from now (Node's minimum of 1 ms for timers; 0 for immediates). */
  schedule(callback: () => void, delayMs: number, repeat = false): VirtualTimer {
    const entry: Entry = { id: this.nextId++, time: this.current + delayMs, seq: this.seq++, callback, delayMs, repeatMs: repeat ? delayMs : null, cancelled: false };
    this.byId.set(entry.id, entry);
    this.push(entry);
    return new VirtualTimer(entry, this);
  }

  cancel(handle: unknown): void {
    const id = handle instanceof VirtualTimer ? handle.entry.id : typeof handle === 'number' ? handle : null;
    if (id === null) return;
    const entry = this.byId.get(id);
    if (entry === undefined) return;
    entry.cancelled = true;
    this.byId.delete(id);
  }

  reschedule(entry: Entry): void {
    if (entry.cancelled) return;
    entry.cancelled = true;
    const fresh: Entry = { ...entry, time: this.current + entry.delayMs, seq: this.seq++, cancelled: false };
    this.byId.set(entry.id, fresh);
    this.push(fresh);
  }

  /** Fires the next callback (advancing time to it); false when none is due before `limitMs`. */
  fireNext(limitMs = Number.POSITIVE_INFINITY): boolean {
    for (;;) {
      const entry = this.heap[0];
      if (entry === undefined) return false;
      if (entry.cancelled || this.byId.get(entry.id) !== entry) {
        this.pop();
        continue;
      }
      if (entry.time > limitMs) return false;
      this.pop();
      this.current = Math.max(this.current, entry.time);
      if (entry.repeatMs !== null) {
        const again: Entry = { ...entry, time: this.current + Math.max(1, entry.repeatMs), seq: this.seq++ };
        this.byId.set(entry.id, again);
        this.push(again);
      } else this.byId.delete(entry.id);
      entry.callback();
      return true;
    }
  }

  /** Moves time forward without firing (nothing due before `ms`). */
  advanceTo(ms: number): void {
    this.current = Math.max(this.current, ms);
  }

  /** Replaces the global timers and clocks with this one; returns the undo. */
  install(): () => void {
    const saved = {
      setTimeout: globalThis.setTimeout,
      clearTimeout: globalThis.clearTimeout,
      setInterval: globalThis.setInterval,
      clearInterval: globalThis.clearInterval,
      setImmediate: globalThis.setImmediate,
      clearImmediate: globalThis.clearImmediate,
      dateNow: Date.now,
      performanceNow: performance.now.bind(performance),
      abortTimeout: AbortSignal.timeout.bind(AbortSignal),
    };
    const timerDelay = (ms: unknown): number => {
      const value = typeof ms === 'number' && Number.isFinite(ms) ? ms : 0;
      return Math.max(1, Math.floor(value));
    };
    const patched = globalThis as unknown as Record<string, unknown>;
    patched.setTimeout = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => this.schedule(() => callback(...args), timerDelay(ms));
    patched.setInterval = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => this.schedule(() => callback(...args), timerDelay(ms), true);
    patched.setImmediate = (callback: (...args: unknown[]) => void, ...args: unknown[]) => this.schedule(() => callback(...args), 0);
    patched.clearTimeout = (handle: unknown) => this.cancel(handle);
    patched.clearInterval = (handle: unknown) => this.cancel(handle);
    patched.clearImmediate = (handle: unknown) => this.cancel(handle);
    Date.now = () => this.current;
    performance.now = () => this.current;
    AbortSignal.timeout = (ms: number) => {
      const controller = new AbortController();
      this.schedule(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), timerDelay(ms));
      return controller.signal;
    };
    return () => {
      Object.assign(patched, {
        setTimeout: saved.setTimeout,
        clearTimeout: saved.clearTimeout,
        setInterval: saved.setInterval,
        clearInterval: saved.clearInterval,
        setImmediate: saved.setImmediate,
        clearImmediate: saved.clearImmediate,
      });
      Date.now = saved.dateNow;
      performance.now = saved.performanceNow;
      AbortSignal.timeout = saved.abortTimeout;
    };
  }

  private before(a: Entry, b: Entry): boolean {
    return a.time < b.time || (a.time === b.time && a.seq < b.seq);
  }

  private push(entry: Entry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const up = heap[parent];
      if (up === undefined || !this.before(entry, up)) break;
      heap[i] = up;
      heap[parent] = entry;
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      const l = heap[left];
      const r = heap[right];
      const s = heap[smallest];
      if (l !== undefined && s !== undefined && this.before(l, s)) smallest = left;
      const s2 = heap[smallest];
      if (r !== undefined && s2 !== undefined && this.before(r, s2)) smallest = right;
      if (smallest === i) return;
      const a = heap[i];
      const b = heap[smallest];
      if (a === undefined || b === undefined) return;
      heap[i] = b;
      heap[smallest] = a;
      i = smallest;
    }
  }
}
