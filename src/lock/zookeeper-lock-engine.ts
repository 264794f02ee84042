import type { Logger } from 'pino';
import type { ZooKeeperSettings } from '../config/settings.js';
import { acquireManyOrdered } from './acquire-many.js';
import type { HeldLockHandle } from './held-lock.js';
import type {
  AcquireManyOptions,
  AcquireManyResult,
  AcquireOptions,
  HeldLock,
  LockEngine,
  LockInspection,
  LockKey,
  LockServiceState,
  Priority,
} from './lock-engine.js';
import { LockUnavailableError } from './lock-errors.js';
import { parseNodeData } from './lock-node-data.js';
import { type LockEngineStats, newStats, snapshotStats } from './lock-stats.js';
import type { PrefixRanks } from './queue-order.js';
import { Acquisition, type AcquisitionContext } from './zk-acquisition.js';
import type { ZkClient } from './zk-client.js';
import { ContainerCache, ContentionHints } from './zk-containers.js';
import { isZkCode } from './zk-errors.js';
import { inspectKey, listHeldKeys } from './zk-inspect.js';
import { ReleaseQueue } from './zk-release-queue.js';
import { type SessionLease, ZkSession } from './zk-session.js';
import { PRIVATE_LOCK, documentPath, normalizeRoot } from './znode-names.js';

const KNOWN_CONTAINERS = 100_000;
const CONTENTION_TTL_MS = 2_000;
const CONTENTION_CAPACITY = 10_000;
const CLOSE_DRAIN_MS = 2_000;

/**
 * The product lock engine: priority locks on ZooKeeper, one session per engine (one engine per
 * process). See zk-acquisition.ts for the algorithm and README for the guarantees.
 */
export class ZooKeeperLockEngine implements LockEngine {
  private readonly settings: ZooKeeperSettings;
  private readonly logger: Logger;
  private readonly engineStats = newStats();
  private readonly session: ZkSession;
  private readonly releases: ReleaseQueue;
  private readonly context: AcquisitionContext;
  private readonly active = new Set<Acquisition>();
  private readonly held = new Map<Acquisition, HeldLockHandle>();
  private readonly root: string;
  private readonly prefixes: PrefixRanks;
  private closed = false;
  private readonly expiryListeners = new Set<() => void>();

  constructor(settings: ZooKeeperSettings, logger: Logger) {
    this.settings = settings;
    this.logger = logger;
    this.root = normalizeRoot(settings.lockRoot);
    this.prefixes = { foreground: settings.foregroundPrefix, background: settings.backgroundPrefix };
    this.session = new ZkSession(settings, logger, this.engineStats, {
      connected: (lease) => this.onConnected(lease),
      lossMarginExceeded: (generation) => this.loseHeld(generation, 'ZooKeeper connection suspended past the safety margin'),
      expired: (generation) => this.onExpired(generation),
    });
    this.releases = new ReleaseQueue(this.session, logger, this.engineStats);
    this.context = {
      root: this.root,
      prefixes: this.prefixes,
      stats: this.engineStats,
      session: this.session,
      releases: this.releases,
      containers: new ContainerCache(KNOWN_CONTAINERS, settings.auth !== null),
      contention: new ContentionHints(CONTENTION_TTL_MS, CONTENTION_CAPACITY),
      logger,
      sessionTimeoutMs: settings.sessionTimeoutMs,
      started: (attempt) => this.active.add(attempt),
      finished: (attempt) => this.active.delete(attempt),
      granted: (attempt, held) => this.held.set(attempt, held),
      released: (attempt) => this.held.delete(attempt),
    };
    this.session.start();
  }

  /** Counters for benchmarks and metrics (a copy). */
  stats(): LockEngineStats {
    return snapshotStats(this.engineStats);
  }

  state(): LockServiceState {
    return this.session.state();
  }

  onStateChange(listener: (state: LockServiceState) => void): () => void {
    return this.session.onStateChange(listener);
  }

  async acquire(key: LockKey, priority: Priority, options: AcquireOptions): Promise<HeldLock> {
    await this.ready(options.signal);
    return new Acquisition(this.context, key, priority, options).run();
  }

  async acquireMany(keys: readonly LockKey[], priority: Priority, options: AcquireManyOptions): Promise<AcquireManyResult> {
    await this.ready(options.signal);
    return acquireManyOrdered(
      {
        tryAcquire: (key, p, o) => new Acquisition(this.context, key, p, o).tryOnce(),
        acquire: (key, p, o) => new Acquisition(this.context, key, p, o).run(),
      },
      keys,
      priority,
      options,
    );
  }

  async inspect(key: LockKey): Promise<LockInspection> {
    return this.withClient((client) => inspectKey(client, this.root, this.prefixes, key));
  }

  async listHeld(index: string, limit: number): Promise<readonly LockInspection[]> {
    return this.withClient((client) => listHeldKeys(client, this.root, this.prefixes, index, limit));
  }

  /**
   * Deletes the holder's privateLock (and its queue entry, so the queue moves on). A holder in
   * this process is marked lost first; one elsewhere learns it from its watch on privateLock.
   */
  async forceRelease(key: LockKey): Promise<boolean> {
    return this.withClient(async (client) => {
      const docPath = documentPath(this.root, key);
      const lockPath = `${docPath}/${PRIVATE_LOCK}`;
      let node;
      try {
        node = await client.get(lockPath);
      } catch (error) {
        if (isZkCode(error, 'NONODE')) return false;
        throw error;
      }
      const data = parseNodeData(node.data);
      for (const [attempt] of this.held) {
        if (attempt.guid === data.guid) attempt.markLost('forced release by an operator');
      }
      this.logger.warn({ key, holder: data.owner, message: data.message }, 'forced release of a lock');
      const deletions = [client.delete(lockPath, node.stat.version)];
      if (data.entry !== null) deletions.push(client.delete(`${docPath}/${data.entry}`));
      const results = await Promise.allSettled(deletions);
      const first = results[0];
      if (first?.status === 'rejected') {
        if (isZkCode(first.reason, 'NONODE') || isZkCode(first.reason, 'BADVERSION')) return false;
        throw first.reason;
      }
      return true;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = new LockUnavailableError('lock engine closed');
    for (const attempt of this.active) attempt.abort(closing);
    // Not awaited one by one: with ZooKeeper out of reach a release waits for a reconnect that may
    // never come. The deletions in flight get the drain; closing the session removes the rest.
    for (const held of [...this.held.values()]) void held.release();
    await this.releases.drain(CLOSE_DRAIN_MS);
    this.releases.abandonAll();
    await this.session.close();
  }

  private async ready(signal: AbortSignal | undefined): Promise<void> {
    if (this.closed) throw new LockUnavailableError('lock engine closed');
    this.session.throwIfUnavailable();
    signal?.throwIfAborted();
  }

  private async withClient<T>(body: (client: ZkClient) => Promise<T>): Promise<T> {
    const timeout = AbortSignal.timeout(this.settings.connectionRetry * this.settings.connectionDelayMs);
    const lease = await this.session.connected(timeout).catch((error: unknown) => {
      throw error instanceof LockUnavailableError ? error : new LockUnavailableError('ZooKeeper not connected', { cause: error });
    });
    return body(lease.client);
  }

  private onConnected(lease: SessionLease): void {
    this.releases.onConnected(lease);
  }

  /** Calls `listener` once per expired session (metrics count them); returns an unsubscribe function. */
  onSessionExpired(listener: () => void): () => void {
    this.expiryListeners.add(listener);
    return () => this.expiryListeners.delete(listener);
  }

  private onExpired(generation: number): void {
    for (const listener of this.expiryListeners) listener();
    this.releases.onExpired(generation);
    this.loseHeld(generation, 'ZooKeeper session expired');
    const expired = new LockUnavailableError('ZooKeeper session expired while waiting for the lock');
    for (const attempt of this.active) {
      if (attempt.generation !== null && attempt.generation <= generation) attempt.abort(expired);
    }
  }

  /** Every lock of that session is lost; their release is queued (guaranteed, or moot if expired). */
  private loseHeld(generation: number, reason: string): void {
    for (const [attempt, held] of [...this.held]) {
      if (attempt.generation === null || attempt.generation > generation) continue;
      attempt.markLost(reason);
      void held.release();
    }
  }
}
