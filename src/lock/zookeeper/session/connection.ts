import type { LockServiceState } from '../../lock-engine.js';
import type { LockZk } from './lock-zk.js';
import type { SessionLease, ZkSession } from './session.js';

const LOSS_SETTLE_MS = 100;

/** The session's connected handle, in the engine's terms, and the session it belongs to. */
export interface Link {
  readonly zk: LockZk;
  /** Increments with every new session; nodes of an older one died with it. */
  readonly generation: number;
}

/**
 * The engine's view of the session: the current link when connected, and a way to wait for one.
 * Waiting survives suspension and the margin (the link may come back within the session) and
 * ends with null when the engine closes; an expiry is seen as a link of a newer generation.
 */
export class Connection {
  private readonly session: ZkSession;
  private cached: { readonly lease: SessionLease; readonly link: Link } | null = null;

  constructor(session: ZkSession) {
    this.session = session;
  }

  current(): Link | null {
    const lease = this.session.current();
    if (lease === null) return null;
    // One link per lease: the same object while the session's handle stays connected.
    if (this.cached?.lease !== lease) this.cached = { lease, link: { zk: lease.zk, generation: lease.generation } };
    return this.cached.link;
  }

  generation(): number {
    return this.session.currentGeneration();
  }

  linkUp(generation: number): boolean {
    return this.session.linkUp(generation);
  }

  state(): LockServiceState {
    return this.session.state();
  }

  /**
   * After a request failed with a connection loss: the session state may not show it yet (the
   * C client reports it on its next turn), and a request issued now may fail at once again. Waits
   * for the next state change, or `ms` at most, so a retry loop never spins.
   */
  settle(ms = LOSS_SETTLE_MS): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        stop();
        resolve();
      };
      const stop = this.session.onStateChange(done);
      const timer = setTimeout(done, ms);
      timer.unref();
    });
  }

  /**
   * Resolves with the connected link; null once the engine is closed or `signal` aborts, and with
   * `untilUnavailable`, as soon as ZooKeeper is declared unreachable (new work fails fast then).
   */
  async whenConnected(signal?: AbortSignal, untilUnavailable = false): Promise<Link | null> {
    for (;;) {
      const link = this.current();
      if (link !== null) return link;
      const state = this.session.state();
      if (state === 'closed' || signal?.aborted === true || (untilUnavailable && state === 'unavailable')) return null;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          stop();
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const stop = this.session.onStateChange(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }
}
