import { type CancelSignal, type HeldLock, type LockKey, type LockRequest, type Priority, type ReleaseOptions, throwIfCancelled } from './lock-engine.js';
import { LockLostError } from './lock-errors.js';

/**
 * Where an acquisition waits and, once granted, what holds it: a key of the memory engine, a
 * document's local cohort in the ZooKeeper engine.
 */
export interface LockHome {
  /**
   * Takes a waiting acquisition out of the queue (timeout, abort); it is failed by the caller.
   * Returns a promise when its leaving has work to finish in the lock service (the queue entry
   * of a document nobody else here waits for), settled once that entry is gone.
   */
  withdraw(acquisition: LockAcquisition): Promise<void> | undefined;
  /** The holder is done; resolves when the release is committed or moot. */
  release(acquisition: LockAcquisition, handOver: boolean): Promise<void>;
  /** `release` with the lock handed over as usual, for a holder nobody waits on: no promise where none is needed. */
  releaseInBackground(acquisition: LockAcquisition): void;
  /** The lock-service link is up right now. */
  linkUp(): boolean;
  /** Resolves when the link is up; rejects with the signal's reason. */
  whenLinkUp(signal: AbortSignal): Promise<void>;
}

/** What a grant fills in. */
export interface GrantDetails {
  readonly queuePosition: number;
  readonly handedOverLocally: boolean;
  readonly fencingToken: number;
}

export type AcquisitionState = 'waiting' | 'held' | 'released' | 'failed';

/**
 * What an acquisition needs of the request it belongs to (`AcquireGroup`); named here so that the
 * acquisition does not depend on the group's module, which creates acquisitions.
 */
export interface AcquisitionGroup {
  readonly request: LockRequest;
  /** A group of one from `acquire` (a single write), not a bulk's keys. */
  readonly single: boolean;
  granted(member: LockAcquisition): void;
  released(member: LockAcquisition): void;
  fail(member: LockAcquisition, error: Error): void;
}

/**
 * One request for one key, from arrival to release: the only per-key object of an acquisition
 * (no timer, AbortController or listener of its own — its group has those). Once granted it is
 * the `HeldLock` the caller sees. The `lost` signal is created on first use.
 */
export class LockAcquisition implements HeldLock {
  readonly key: LockKey;
  readonly priority: Priority;
  readonly group: AcquisitionGroup;
  readonly startedAt: number;
  state: AcquisitionState = 'waiting';
  home: LockHome | null = null;
  acquiredAt = 0;
  waitMs = 0;
  queuePositionOnArrival = 0;
  /** The order its lock home saw it arrive in (1, 2, …): what a read of the queue made before it cannot speak for. */
  arrival = 0;
  handedOverLocally = false;
  fencingToken = 0;
  private lostReason: LockLostError | null = null;
  private lostController: AbortController | null = null;
  private releasing: Promise<void> | null = null;

  constructor(key: LockKey, priority: Priority, group: AcquisitionGroup, now: number) {
    this.key = key;
    this.priority = priority;
    this.group = group;
    this.startedAt = now;
  }

  get lost(): AbortSignal {
    if (this.lostController === null) {
      this.lostController = new AbortController();
      if (this.lostReason !== null) this.lostController.abort(this.lostReason);
    }
    return this.lostController.signal;
  }

  get isLost(): boolean {
    return this.lostReason !== null;
  }

  /** Called by the home: the lock is this acquisition's now. */
  grant(details: GrantDetails, now: number): void {
    this.state = 'held';
    this.acquiredAt = now;
    this.waitMs = now - this.startedAt;
    this.queuePositionOnArrival = details.queuePosition;
    this.handedOverLocally = details.handedOverLocally;
    this.fencingToken = details.fencingToken;
    this.group.granted(this);
  }

  /** Marks a held lock lost (once); false when it was not held or already lost. */
  markLost(reason: string): boolean {
    if (this.state !== 'held' || this.lostReason !== null) return false;
    this.lostReason = new LockLostError(this.key, reason);
    this.lostController?.abort(this.lostReason);
    return true;
  }

  usable(): boolean {
    return this.state === 'held' && this.lostReason === null && this.home !== null && this.home.linkUp();
  }

  async untilUsable(signal?: CancelSignal): Promise<void> {
    if (this.usable()) return;
    if (this.lostReason !== null) throw this.lostReason;
    if (this.state !== 'held' || this.home === null) throw new LockLostError(this.key, 'the lock was released');
    throwIfCancelled(signal);
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const lost = this.lost;
    const onLost = (): void => stop.abort(lost.reason);
    lost.addEventListener('abort', onLost, { once: true });
    try {
      await this.home.whenLinkUp(stop.signal);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      lost.removeEventListener('abort', onLost);
    }
    if (this.lostReason !== null) throw this.lostReason;
  }

  release(options?: ReleaseOptions): Promise<void> {
    if (this.releasing !== null) return this.releasing;
    if (this.state !== 'held' || this.home === null) {
      this.releasing = Promise.resolve();
      return this.releasing;
    }
    this.state = 'released';
    this.group.released(this);
    this.releasing = this.home.release(this, options?.handOver !== false);
    return this.releasing;
  }

  releaseInBackground(): void {
    if (this.releasing !== null) return;
    this.releasing = RELEASED_IN_BACKGROUND;
    if (this.state !== 'held' || this.home === null) return;
    this.state = 'released';
    this.group.released(this);
    this.home.releaseInBackground(this);
  }
}

/** What `release()` answers after `releaseInBackground()`: nobody was to wait for that commit. */
const RELEASED_IN_BACKGROUND: Promise<void> = Promise.resolve();
