import { randomUUID } from 'node:crypto';
import type { LockKey } from '../lock-engine.js';
import { LockUnavailableError } from '../lock-errors.js';
import { privateLockPath } from './znode-names.js';
import type { Link } from './session/connection.js';
import type { EngineContext } from './engine-context.js';
import { type CohortEvent, type CohortState, nextTransition } from './cohort-states.js';
import { CohortNodes } from './cohort-nodes.js';

/**
 * Identifies one document lock's nodes (recovery after a lost reply, forced releases): unique
 * across processes by the random part, within the process by the counter. One `randomUUID` per
 * document lock was 4% of a bulk's allocations.
 */
const GUID_PREFIX = `${randomUUID()}-`;
let guidsIssued = 0;
function nextGuid(): string {
  guidsIssued++;
  return GUID_PREFIX + guidsIssued.toString(36);
}

/** What the core asks of the parts when a move or the link says so (the document lock passes it on). */
export interface CoreHooks {
  /** No linger timer outlives lingering. */
  stopLingerTimer(): void;
  /** ZooKeeper is unreachable: the local requests fail at once. */
  failWaiters(error: Error): void;
}

/**
 * The core of one document lock: who it is (key, paths, guid), its state — moved only by the
 * transition table (cohort-states.ts) — the grant it is in (`incarnation`), the session generation
 * its nodes belong to, and what of ours ZooKeeper holds (cohort-nodes.ts). The parts read these;
 * the core alone writes the state, the incarnation and the generation.
 */
export class CohortCore {
  readonly key: LockKey;
  readonly docPath: string;
  readonly privatePath: string;
  readonly guid = nextGuid();
  readonly ctx: EngineContext;
  /** What of ours ZooKeeper holds under the document. */
  readonly nodes = new CohortNodes();
  private current: CohortState = 'fastPath';
  private grants = 0;
  private sessionGeneration: number;
  private finished: { readonly promise: Promise<void>; readonly resolve: () => void } | null = null;
  private readonly hooks: CoreHooks;

  /**
   * `docPath`: `documentPath(ctx.root, key)`, which the engine has just computed to look the lock
   * up. `key`: the engine's own copy (acquire-calls.ts makes one per key), kept as it is.
   */
  constructor(ctx: EngineContext, key: LockKey, docPath: string, hooks: CoreHooks) {
    this.ctx = ctx;
    this.key = key;
    this.docPath = docPath;
    this.privatePath = privateLockPath(docPath);
    this.sessionGeneration = ctx.connection.generation();
    this.hooks = hooks;
  }

  get state(): CohortState {
    return this.current;
  }

  /** The grant the lock is in now: answers to reads of an earlier one are stale. */
  get incarnation(): number {
    return this.grants;
  }

  /** Session generation our nodes belong to. */
  get generation(): number {
    return this.sessionGeneration;
  }

  /** Moves by the transition table (cohort-states.ts) and runs the bookkeeping that goes with the move. */
  apply(event: CohortEvent): void {
    const transition = nextTransition(this.current, event);
    this.current = transition.to;
    for (const effect of transition.effects) {
      if (effect === 'newIncarnation') this.grants++;
      else if (effect === 'stopLingerTimer') this.hooks.stopLingerTimer();
      else this.finished?.resolve();
    }
  }

  whenFinished(): Promise<void> {
    if (this.current === 'released') return Promise.resolve();
    if (this.finished === null) {
      let resolve = (): void => undefined;
      const promise = new Promise<void>((r) => (resolve = r));
      this.finished = { promise, resolve };
    }
    return this.finished.promise;
  }

  /**
   * The connected link of our session; null when the engine closed, our session ended, or
   * ZooKeeper is unreachable — then the requests waiting here fail at once (503, nothing was
   * forwarded) instead of waiting out their timeouts.
   */
  async link(): Promise<Link | null> {
    const link = await this.ctx.connection.whenConnected(undefined, true);
    if (link === null && this.ctx.connection.state() === 'unavailable') {
      this.hooks.failWaiters(new LockUnavailableError(`ZooKeeper unreachable while acquiring ${this.key.index}/${this.key.id}`));
    }
    if (link === null || this.current === 'released') return null;
    if (link.generation !== this.sessionGeneration) {
      if (this.nodes.entry !== null || this.nodes.ownsPrivateLock) return null;
      this.sessionGeneration = link.generation;
    }
    return link;
  }

  /** The current link when it is our session's; null otherwise (no round trip is waited for). */
  currentLink(): Link | null {
    const link = this.ctx.connection.current();
    return link === null || link.generation !== this.sessionGeneration ? null : link;
  }
}
