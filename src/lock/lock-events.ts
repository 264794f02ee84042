import type { LockKey, Priority } from './lock-engine.js';

/**
 * What an engine reports as it works, for metrics and logs (which subscribe; the engine knows
 * neither). Called synchronously: listeners must be cheap and must not throw.
 */
export interface LockEvents {
  granted(e: { key: LockKey; priority: Priority; waitMs: number; queuePosition: number; handedOverLocally: boolean }): void;
  released(e: { key: LockKey; priority: Priority; holdMs: number }): void;
  timedOut(e: { key: LockKey; priority: Priority; waitMs: number }): void;
  lost(e: { key: LockKey; reason: string }): void;
  sessionExpired(): void;
  /** The orphan sweep deleted `count` nodes of this process's session that no local lock claimed. */
  orphansRemoved(count: number): void;
  /**
   * A release or yield found its privateLock no longer its own (the owner check refused it, or it
   * was gone): the lock was lost while held and nobody here had been told (deleted by hand and
   * taken by the next holder, or force-released before the news came).
   */
  lostAtRelease(e: { key: LockKey }): void;
  /** ZooKeeper refused a batch acquisition's transaction as a whole; `code` names its first failing operation's error (NODEEXISTS, NONODE). */
  batchRefused(e: { code: string }): void;
}

const ignore = (): void => undefined;

export const NO_LOCK_EVENTS: LockEvents = {
  granted: ignore,
  released: ignore,
  timedOut: ignore,
  lost: ignore,
  sessionExpired: ignore,
  orphansRemoved: ignore,
  lostAtRelease: ignore,
  batchRefused: ignore,
};

/** Fills the events a subscriber does not care about. */
export function lockEvents(partial: Partial<LockEvents>): LockEvents {
  return { ...NO_LOCK_EVENTS, ...partial };
}
