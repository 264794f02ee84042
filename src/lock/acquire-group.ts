import { type AcquisitionGroup, LockAcquisition } from './lock-acquisition.js';
import type { CancelSignal, LockKey, LockRequest, Priority } from './lock-engine.js';
import { LockTimeoutError } from './lock-errors.js';
import type { LockEvents } from './lock-events.js';

/** Held and waiting acquisitions of one engine, for `activity()`. */
export class ActivityCount {
  held = 0;
  waiting = 0;
}

export interface GroupListener {
  granted(lock: LockAcquisition): void;
  failed(lock: LockAcquisition, error: Error): void;
  /** Every member is granted or failed. */
  settled(): void;
}

export interface GroupContext {
  readonly events: LockEvents;
  readonly activity: ActivityCount;
  /**
   * Longest wait for withdrawn members to have left the lock service before the failure is
   * reported (so a caller that looks right after a timeout sees no entry of its own).
   */
  readonly withdrawWaitMs: number;
}

/**
 * The acquisitions of one `acquire` or `acquireEach` call: ONE deadline timer and ONE abort
 * listener for all of them, however many keys. At the deadline (or abort) every member still
 * waiting is withdrawn from where it waits and failed.
 */
export class AcquireGroup implements AcquisitionGroup {
  readonly request: LockRequest;
  readonly single: boolean;
  private readonly listener: GroupListener;
  private readonly context: GroupContext;
  private readonly members: LockAcquisition[] = [];
  private unsettled = 0;
  private cleanups: Promise<void>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private armed = false;
  private readonly onAbort = (): void => this.expire(abortReason(this.request.signal));

  /** `single`: a group of one from `acquire`, not a bulk's keys. */
  constructor(request: LockRequest, listener: GroupListener, context: GroupContext, single = false) {
    this.request = request;
    this.listener = listener;
    this.context = context;
    this.single = single;
  }

  add(key: LockKey, priority: Priority): LockAcquisition {
    const member = new LockAcquisition(key, priority, this, Date.now());
    this.members.push(member);
    this.unsettled++;
    this.context.activity.waiting++;
    return member;
  }

  /** Starts the deadline; call once every member is placed in its queue. */
  arm(): void {
    if (this.armed || this.unsettled === 0) return;
    this.armed = true;
    const { signal, timeoutMs } = this.request;
    if (signal?.aborted === true) {
      this.onAbort();
      return;
    }
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.timer = setTimeout(() => this.expire(null), timeoutMs);
  }

  granted(member: LockAcquisition): void {
    this.context.activity.waiting--;
    this.context.activity.held++;
    this.context.events.granted({
      key: member.key,
      priority: member.priority,
      waitMs: member.waitMs,
      queuePosition: member.queuePositionOnArrival,
      handedOverLocally: member.handedOverLocally,
    });
    this.listener.granted(member);
    this.settle();
  }

  /** A waiting member ends without the lock (also called by engines: session lost, engine closed). */
  fail(member: LockAcquisition, error: Error): void {
    if (member.state !== 'waiting') return;
    member.state = 'failed';
    member.home = null;
    this.context.activity.waiting--;
    if (error instanceof LockTimeoutError) {
      this.context.events.timedOut({ key: member.key, priority: member.priority, waitMs: Date.now() - member.startedAt });
    }
    this.listener.failed(member, error);
    this.settle();
  }

  released(member: LockAcquisition): void {
    this.context.activity.held--;
    this.context.events.released({ key: member.key, priority: member.priority, holdMs: Date.now() - member.acquiredAt });
  }

  private expire(reason: Error | null): void {
    for (const member of this.members) {
      if (member.state !== 'waiting') continue;
      const leaving = member.home?.withdraw(member);
      if (leaving !== undefined) this.cleanups.push(leaving);
      this.fail(member, reason ?? new LockTimeoutError(member.key, this.request.timeoutMs));
    }
  }

  private settle(): void {
    this.unsettled--;
    if (this.unsettled > 0) return;
    clearTimeout(this.timer);
    this.request.signal?.removeEventListener('abort', this.onAbort);
    if (this.cleanups.length === 0) {
      this.listener.settled();
      return;
    }
    const bound = new Promise<void>((resolve) => setTimeout(resolve, this.context.withdrawWaitMs).unref());
    void Promise.race([Promise.allSettled(this.cleanups), bound]).then(() => this.listener.settled());
    this.cleanups = [];
  }
}

function abortReason(signal: CancelSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('aborted', { cause: reason });
}
