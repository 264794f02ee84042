import type { Logger } from 'pino';
import type { ZooKeeperSettings } from '../../../config/settings.js';
import type { LockServiceState } from '../../lock-engine.js';
import { LockUnavailableError } from '../../lock-errors.js';
import type { LockEngineStats } from '../../lock-stats.js';
import type { LockZk } from './lock-zk.js';
import type { SessionHandle, ZkHandles } from './session-handle.js';

/**
 * The C client reports a frozen link only after 2/3 of the session timeout without a reply, so
 * the server may expire the session as early as 1/3 of the timeout after we hear "connecting".
 * Held locks are declared lost at 1/4 of the timeout after that: nothing new is forwarded under
 * them. Their nodes are kept until their holders release them (or the session ends), since a
 * write already sent may still be inside Elasticsearch: deleting them would let the next holder in beside it.
 */
export const SUSPENDED_LOSS_FRACTION = 1 / 4;

const CLOSE_CODE_EXPIRED = -112;
const CLOSE_CODE_AUTH_FAILED = -113;

export interface SessionLease {
  readonly client: SessionHandle;
  /** The engine's port on `client`. */
  readonly zk: LockZk;
  /** Increments with every new handle; nodes of an older generation died with its session. */
  readonly generation: number;
}

export interface SessionEvents {
  /** Connected (first time or again within the same session). */
  connected(lease: SessionLease): void;
  /** Disconnected long enough that locks of this generation can no longer be vouched for. */
  lossMarginExceeded(generation: number): void;
  /** The session of this generation is gone: its ephemeral nodes no longer exist. */
  expired(generation: number): void;
}

/**
 * One ZooKeeper handle per process, shared by every lock. States: connecting → connected ⇄
 * suspended → (margin) unavailable; expiry opens a new handle (never reuses a closed one).
 */
export class ZkSession {
  private readonly settings: ZooKeeperSettings;
  private readonly logger: Logger;
  private readonly stats: LockEngineStats;
  private readonly events: SessionEvents;
  private readonly handles: ZkHandles;
  private readonly stateListeners = new Set<(state: LockServiceState) => void>();
  private currentState: LockServiceState = 'connecting';
  private lease: SessionLease | null = null;
  private handle: SessionHandle | null = null;
  private generation = 0;
  private connectTimer: NodeJS.Timeout | undefined;
  private lossTimer: NodeJS.Timeout | undefined;
  private reopenTimer: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(settings: ZooKeeperSettings, logger: Logger, stats: LockEngineStats, events: SessionEvents, handles: ZkHandles) {
    this.settings = settings;
    this.logger = logger;
    this.stats = stats;
    this.events = events;
    this.handles = handles;
  }

  start(): void {
    this.openHandle();
  }

  state(): LockServiceState {
    return this.currentState;
  }

  onStateChange(listener: (state: LockServiceState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** The connected handle, or null when not connected right now. */
  current(): SessionLease | null {
    return this.currentState === 'connected' ? this.lease : null;
  }

  currentGeneration(): number {
    return this.generation;
  }

  /** Connected right now, on the session of `generation`. */
  linkUp(generation: number): boolean {
    return this.currentState === 'connected' && this.generation === generation && this.lease !== null;
  }

  /**
   * Resolves with the connected handle; rejects at once when ZooKeeper is known unreachable or
   * the engine closed, or when `signal` aborts first (with its reason).
   */
  async connected(signal: AbortSignal): Promise<SessionLease> {
    for (;;) {
      const lease = this.current();
      if (lease !== null) return lease;
      this.throwIfUnavailable();
      signal.throwIfAborted();
      await new Promise<void>((resolve) => {
        const done = (): void => {
          unsubscribe();
          signal.removeEventListener('abort', done);
          resolve();
        };
        const unsubscribe = this.onStateChange(done);
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  throwIfUnavailable(): void {
    if (this.currentState === 'unavailable') {
      throw new LockUnavailableError(`ZooKeeper unreachable (${this.settings.servers})`, { meta: { servers: this.settings.servers } });
    }
    if (this.currentState === 'closed') throw new LockUnavailableError('lock engine closed');
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.clearTimers();
    const handle = this.handle;
    this.handle = null;
    this.lease = null;
    if (handle !== null) await handle.close();
    this.setState('closed');
  }

  private clearTimers(): void {
    clearTimeout(this.connectTimer);
    clearTimeout(this.lossTimer);
    clearTimeout(this.reopenTimer);
  }

  private setState(next: LockServiceState): void {
    if (this.currentState === next) return;
    if (this.currentState === 'closed') return;
    this.currentState = next;
    for (const listener of [...this.stateListeners]) listener(next);
  }

  private connectWindowMs(): number {
    return Math.max(1, this.settings.connectionRetry) * Math.max(1, this.settings.connectionDelayMs);
  }

  private openHandle(): void {
    if (this.closing) return;
    const generation = ++this.generation;
    this.stats.sessions++;
    let handle: SessionHandle;
    let zk: LockZk;
    try {
      ({ handle, zk } = this.handles.open({ servers: this.settings.servers, sessionTimeoutMs: this.settings.sessionTimeoutMs }));
      handle.on('connect', () => void this.onConnect(handle, zk, generation));
      handle.on('connecting', () => this.onConnecting(generation));
      handle.on('close', (code) => this.onClose(generation, code));
      handle.connect();
    } catch (error) {
      this.logger.error({ err: error, servers: this.settings.servers }, 'cannot create a ZooKeeper handle; retrying');
      this.reopenTimer = setTimeout(() => this.openHandle(), this.settings.connectionDelayMs);
      return;
    }
    this.handle = handle;
    this.lease = null;
    this.armConnectTimer(generation);
  }

  /** The C client retries a wrong address forever without a word: our own timer reports it. */
  private armConnectTimer(generation: number): void {
    clearTimeout(this.connectTimer);
    this.connectTimer = setTimeout(() => {
      if (this.generation !== generation || this.currentState === 'connected' || this.closing) return;
      this.logger.error(
        { servers: this.settings.servers, waitedMs: this.connectWindowMs() },
        `cannot connect to ZooKeeper at ${this.settings.servers}; lock requests fail until it is reachable`,
      );
      this.setState('unavailable');
      this.armConnectTimer(generation);
    }, this.connectWindowMs());
    this.connectTimer.unref();
  }

  private async onConnect(handle: SessionHandle, zk: LockZk, generation: number): Promise<void> {
    if (this.generation !== generation || this.closing) return;
    clearTimeout(this.lossTimer);
    clearTimeout(this.connectTimer);
    const firstConnect = this.lease === null;
    if (firstConnect && this.settings.auth !== null) {
      try {
        await handle.addAuth(this.settings.auth.scheme, this.settings.auth.credentials);
      } catch (error) {
        this.logger.error({ err: error }, 'ZooKeeper authentication failed');
        this.setState('unavailable');
        return;
      }
      if (this.generation !== generation || this.closing) return;
    }
    const lease: SessionLease = { client: handle, zk, generation };
    this.lease = lease;
    if (this.currentState !== 'connected') {
      this.logger.info({ servers: this.settings.servers, sessionId: handle.sessionId, generation }, 'ZooKeeper connected');
    }
    this.setState('connected');
    this.events.connected(lease);
  }

  private onConnecting(generation: number): void {
    if (this.generation !== generation || this.closing) return;
    if (this.currentState !== 'connected') return;
    this.logger.warn({ servers: this.settings.servers }, 'ZooKeeper connection lost; reconnecting within the session');
    this.setState('suspended');
    const timeoutMs = this.negotiatedTimeoutMs();
    clearTimeout(this.lossTimer);
    this.lossTimer = setTimeout(() => {
      // Unavailable already (the connect window is shorter than the margin) is no reason to keep
      // vouching: only a reconnection, which clears this timer, is.
      if (this.generation !== generation || this.closing || this.currentState === 'connected') return;
      this.logger.error({ suspendedMs: timeoutMs * SUSPENDED_LOSS_FRACTION }, 'ZooKeeper suspended past the safety margin; held locks are lost');
      this.setState('unavailable');
      this.events.lossMarginExceeded(generation);
    }, timeoutMs * SUSPENDED_LOSS_FRACTION);
    this.lossTimer.unref();
    this.armConnectTimer(generation);
  }

  private negotiatedTimeoutMs(): number {
    const negotiated = this.handle?.negotiatedTimeoutMs ?? 0;
    return negotiated > 0 ? Math.min(negotiated, this.settings.sessionTimeoutMs) : this.settings.sessionTimeoutMs;
  }

  private onClose(generation: number, code: number): void {
    if (this.generation !== generation || this.closing) return;
    clearTimeout(this.lossTimer);
    this.lease = null;
    this.handle = null;
    const reason = code === CLOSE_CODE_EXPIRED ? 'session expired' : code === CLOSE_CODE_AUTH_FAILED ? 'authentication failed' : `closed (${code})`;
    this.logger.error({ servers: this.settings.servers, code, reason }, 'ZooKeeper session ended; opening a new one');
    this.setState(this.currentState === 'unavailable' ? 'unavailable' : 'connecting');
    this.events.expired(generation);
    const delay = code === CLOSE_CODE_AUTH_FAILED ? this.settings.connectionDelayMs : 0;
    this.reopenTimer = setTimeout(() => this.openHandle(), delay);
  }
}
