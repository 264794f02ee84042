import type { ZooKeeperLockEngine } from '../../src/lock/zookeeper/zookeeper-lock-engine.js';
import type { SimClient } from './sim-client.js';

/** The shape of every simulated run: timing, lock root, limits. */
export const SESSION_TIMEOUT_MS = 4_000;
export const ROOT = '/sim/locks';
export const INDEX = 'docs';
/** Actors start work and faults strike within this window; then the system is left alone. */
export const ACTIVE_MS = 3_000;
/** Quiet time after the last fault before the end checks: a session cut at the end has expired or reconnected by then. */
export const QUIET_MS = 2 * SESSION_TIMEOUT_MS;
/** Longest run in virtual time; a run still busy then is stuck. */
export const RUN_LIMIT_MS = 60_000;
/** An acquisition settles within its timeout plus this (the withdrawal of its queue entry may wait for a link, bounded by the session). */
export const SETTLE_BOUND_MS = SESSION_TIMEOUT_MS + 1_000;
export const PROBE_TIMEOUT_MS = 20_000;
export const START_MS = 1_800_000_000_000;

/** One engine of a run and every session handle it opened (the newest is current). */
export interface EngineSlot {
  readonly index: number;
  readonly engine: ZooKeeperLockEngine;
  readonly clients: SimClient[];
}

/** The server session an engine holds its locks on: its newest handle's. */
export function sessionOf(slot: EngineSlot): string {
  return slot.clients.at(-1)?.sessionId ?? '0';
}
