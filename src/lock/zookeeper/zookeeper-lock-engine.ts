import type { Logger } from 'pino';
import type { ZooKeeperSettings } from '../../config/settings.js';
import { acquireEach, acquireOne } from '../acquire-calls.js';
import { ActivityCount, type GroupContext } from '../acquire-group.js';
import type { LockAcquisition } from '../lock-acquisition.js';
import {
  type AcquireEachRequest,
  type AcquireEachResult,
  type CancelSignal,
  type HeldLock,
  type LockEngine,
  type LockInspection,
  type LockKey,
  type LockRequest,
  type LockServiceState,
  type LockWaiterInfo,
  type Priority,
  throwIfCancelled,
} from '../lock-engine.js';
import { LockUnavailableError } from '../lock-errors.js';
import { type LockEvents, NO_LOCK_EVENTS } from '../lock-events.js';
import { type LockEngineStats, newStats, snapshotStats } from '../lock-stats.js';
import type { PrefixRanks } from '../queue-order.js';
import { ZkError } from '../../zookeeper-client/zk-errors.js';
import { PRIVATE_LOCK, documentPath, encodeSegment, indexPath, keyOfDocument, normalizeRoot } from './znode-names.js';
import { acquireInBatches } from './queue/batch-acquire.js';
import { Connection, type Link } from './session/connection.js';
import { ContainerCache, ContentionHints } from './queue/containers.js';
import { DocumentLock } from './document-lock.js';
import type { EngineContext } from './engine-context.js';
import { forceRelease } from './ownership/force-release.js';
import { ForcedReleaseEpoch } from './ownership/forced-release-epoch.js';
import { type ZkInspection, heldKeys, inspectKey } from './inspect.js';
import { OrphanSweep } from './recovery/orphan-sweep.js';
import { RecentReleases } from './cohort/recent-releases.js';
import { ReleaseBatcher } from './ownership/release-batcher.js';
import { ZkSession } from './session/session.js';
import { type ZkHandles, addonHandles } from './session/session-handle.js';

const KNOWN_CONTAINERS = 100_000;
const CONTENTION_TTL_MS = 2_000;
const CONTENTION_CAPACITY = 10_000;
/** Documents remembered as released a moment ago (lingering, keeping document nodes); the oldest go first. */
const RECENT_RELEASES_CAPACITY = 10_000;
/**
 * A document this process locks again within this long of its last release (or within the linger
 * window, when that is longer) keeps its container at the next release (cohort-ownership.ts,
 * `deletesDocument`).
 */
const WRITTEN_AGAIN_WITHIN_MS = 1_000;
const CLOSE_DRAIN_MS = 2_000;
/**
 * A bulk's keys per transaction: a bulk forwards the items of the first transaction's grants
 * while ZooKeeper commits the next (bulk-round.ts), instead of waiting for one commit of all.
 */
const BULK_KEYS_PER_TXN = 250;
const OPERATOR_ATTEMPTS = 3;
/** ZooKeeper operations outstanding on the session at most (a multi counts its operations). */
export const MAX_OUTSTANDING_OPS = 8_192;

export interface ZooKeeperLockEngineOptions {
  readonly events?: LockEvents;
  /** Where the session's handles come from; our ZooKeeper addon unless given (the simulation suite gives its own). */
  readonly handles?: ZkHandles;
}

/**
 * Priority locks on ZooKeeper, one session per engine (one engine per process). Requests of
 * this process for one document share one `DocumentLock` (document-lock.ts; its states: cohort-states.ts);
 * `acquireEach` takes fresh documents in batch transactions (batch-acquire.ts); releases are
 * compare-and-delete transactions, coalesced (release-batcher.ts). docs/lock-protocol.md describes the protocol.
 */
export class ZooKeeperLockEngine implements LockEngine {
  private readonly settings: ZooKeeperSettings;
  private readonly logger: Logger;
  private readonly engineStats = newStats();
  private readonly session: ZkSession;
  private readonly connection: Connection;
  private readonly context: EngineContext;
  private readonly groupContext: GroupContext;
  private readonly activityCount = new ActivityCount();
  private readonly locks = new Map<string, DocumentLock>();
  /** Guids of document locks that left the map and whose release is still on its way. */
  private readonly releasing = new Set<string>();
  /** The index of the latest new document lock and its documents' path prefix (`documentPath` up to the id). */
  private lastIndex: { readonly name: string; readonly pathPrefix: string } | null = null;
  /** Single acquisitions of documents not known to exist, taken together at the end of this turn. */
  private freshSingles: DocumentLock[] = [];
  private readonly root: string;
  private readonly prefixes: PrefixRanks;
  private closed = false;
  /** The session generation connected last: connecting again within it is a reconnect. */
  private connectedGeneration = -1;

  constructor(settings: ZooKeeperSettings, logger: Logger, options: ZooKeeperLockEngineOptions = {}) {
    this.settings = settings;
    this.logger = logger;
    this.root = normalizeRoot(settings.lockRoot);
    this.prefixes = { foreground: settings.foregroundPrefix, background: settings.backgroundPrefix };
    const events = options.events ?? NO_LOCK_EVENTS;
    const handles = options.handles ?? addonHandles(this.engineStats, settings.auth !== null, MAX_OUTSTANDING_OPS);
    this.session = new ZkSession(settings, logger, this.engineStats, {
      connected: () => {
        const link = this.connection.current();
        if (link === null) return;
        this.context.forcedEpoch.connected(link);
        // A reply lost or misreported across the reconnect may have left a node of ours behind (a
        // new session has none yet).
        if (this.connectedGeneration === link.generation) void this.context.orphans.sweep();
        this.connectedGeneration = link.generation;
      },
      lossMarginExceeded: (generation) => this.onMarginExceeded(generation),
      expired: (generation) => this.onExpired(generation),
    }, handles);
    this.connection = new Connection(this.session);
    const containers = new ContainerCache(KNOWN_CONTAINERS);
    const lockLostAtRelease = (docPath: string, code: string): void => {
      const key = keyOfDocument(this.root, docPath);
      logger.warn({ key, code }, 'privateLock was no longer ours at its release (deleted by hand, or force-released): the lock was lost, nothing of the next holder\'s was deleted');
      events.lostAtRelease({ key });
    };
    const forcedEpoch = new ForcedReleaseEpoch(this.root, containers, logger, (forcedZxid) => {
      for (const lock of this.locks.values()) lock.forcedReleaseSeen(forcedZxid);
    });
    this.context = {
      root: this.root,
      prefixes: this.prefixes,
      bounds: { maxCount: settings.handOverMaxCount, maxMs: settings.handOverMaxMs },
      lingerMs: settings.lingerMs,
      deletesCreatedDocuments: settings.documentCleanup === 'release',
      recentReleases: new RecentReleases(Math.max(settings.lingerMs, WRITTEN_AGAIN_WITHIN_MS), RECENT_RELEASES_CAPACITY),
      connection: this.connection,
      containers,
      contention: new ContentionHints(CONTENTION_TTL_MS, CONTENTION_CAPACITY),
      releases: new ReleaseBatcher(this.connection, forcedEpoch, logger, { documentKept: (docPath) => containers.remember(docPath), lockLost: lockLostAtRelease }),
      forcedEpoch,
      releasing: this.releasing,
      orphans: new OrphanSweep(
        this.root,
        this.connection,
        forcedEpoch,
        logger,
        {
          knows: (docPath, name) => this.locks.get(docPath)?.knowsNode(name) === true,
          claims: (docPath, name, guid) => {
            if (this.releasing.has(guid)) return true;
            const lock = this.locks.get(docPath);
            return lock !== undefined && (lock.guid === guid || (name === PRIVATE_LOCK && lock.mayHoldPrivateLock()));
          },
        },
        (count) => events.orphansRemoved(count),
      ),
      events,
      logger,
      detach: (docPath, lock) => {
        if (this.locks.get(docPath) === lock) this.locks.delete(docPath);
      },
      lockLostAtRelease,
      rehome: (_key, waiters) => this.place(waiters, false),
    };
    this.groupContext = { events, activity: this.activityCount, withdrawWaitMs: settings.sessionTimeoutMs };
    this.session.start();
  }

  /** Counters for benchmarks (a copy). */
  stats(): LockEngineStats {
    return snapshotStats(this.engineStats);
  }

  state(): LockServiceState {
    return this.session.state();
  }

  onStateChange(listener: (state: LockServiceState) => void): () => void {
    return this.session.onStateChange(listener);
  }

  activity(): { readonly held: number; readonly waiting: number } {
    return { held: this.activityCount.held, waiting: this.activityCount.waiting };
  }

  async acquire(key: LockKey, priority: Priority, request: LockRequest): Promise<HeldLock> {
    this.ready(request.signal);
    return acquireOne(this.groupContext, key, priority, request, (members) => this.place(members, false));
  }

  async acquireEach(keys: readonly LockKey[], priority: Priority, request: AcquireEachRequest): Promise<AcquireEachResult> {
    this.ready(request.signal);
    return acquireEach(this.groupContext, keys, priority, request, (members) => this.place(members, true));
  }

  async inspect(key: LockKey): Promise<LockInspection> {
    // A release of ours on its way is seen as done: the read is ordered after it.
    const releaseIssued = this.context.releases.issuedFor([documentPath(this.root, key)]);
    if (releaseIssued !== null) await releaseIssued;
    return this.withLink(async (link) => this.withLocal(await inspectKey(link.zk, this.root, this.prefixes, key)));
  }

  async listHeld(index: string, limit: number): Promise<readonly LockInspection[]> {
    return this.withLink(async (link) => {
      const keys = await heldKeys(link.zk, this.root, index, limit);
      const inspections = await Promise.all(keys.map((key) => inspectKey(link.zk, this.root, this.prefixes, key)));
      return inspections.filter((inspection) => inspection.holder !== null).map((inspection) => this.withLocal(inspection));
    });
  }

  async forceRelease(key: LockKey): Promise<boolean> {
    const docPath = documentPath(this.root, key);
    const note = JSON.stringify({ forcedReleaseAt: Date.now() });
    const forced = await this.withLink((link) => forceRelease(link.zk, docPath, note, this.context.forcedEpoch));
    if (forced === null) return false;
    const local = this.locks.get(docPath);
    if (local !== undefined && local.guid === forced.guid) local.forcedHere();
    this.logger.warn({ key, holder: forced.data.owner, message: forced.data.message }, 'forced release of a lock');
    return true;
  }

  /**
   * Deletes the lock nodes of this process's session that no local lock claims (by guid): what a
   * reply lost or misreported across a reconnect, or an acquisition that failed, may leave
   * behind. Runs by itself after every reconnect and failed acquisition; call it after any
   * outcome the engine cannot vouch for. Concurrent calls share one sweep (plus one more after
   * it). Resolves with the number of nodes deleted; never rejects.
   */
  sweepOrphans(): Promise<number> {
    return this.context.orphans.sweep();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = new LockUnavailableError('lock engine closed');
    for (const lock of [...this.locks.values()]) {
      for (const member of lock.localWaiters()) {
        lock.withdraw(member);
        member.group.fail(member, closing);
      }
      // Not awaited one by one: with ZooKeeper out of reach a release waits for a reconnect that
      // may never come. The transactions in flight get the drain; closing the session removes the rest.
      void lock.holder?.release();
      void lock.giveBack('lingerEnded');
    }
    await this.context.releases.drain(CLOSE_DRAIN_MS);
    await this.session.close();
    this.locks.clear();
  }

  /** Puts requests where they wait: a live document lock of this process, or a new one. */
  private place(members: readonly LockAcquisition[], batch: boolean): void {
    const fresh: DocumentLock[] = [];
    for (const member of members) {
      try {
        this.lockFor(member.key, fresh).arrive(member);
      } catch (error) {
        member.group.fail(member, error instanceof Error ? error : new Error(String(error)));
      }
    }
    const { contention, containers } = this.context;
    if (batch && fresh.length > 1) {
      const batched: DocumentLock[] = [];
      const contended: DocumentLock[] = [];
      for (const lock of fresh) (contention.contended(lock.docPath) ? contended : batched).push(lock);
      for (const lock of contended) lock.begin();
      void acquireInBatches(this.context, batched, { mayLinger: false, keysPerTransaction: BULK_KEYS_PER_TXN });
      return;
    }
    for (const lock of fresh) {
      // A document never seen: its container and privateLock in one transaction, together with
      // the other fresh documents of this turn. A known one: the fast path (one round trip).
      if (contention.contended(lock.docPath) || containers.isKnown(lock.docPath)) lock.begin();
      else this.takeFreshLater(lock);
    }
  }

  private takeFreshLater(lock: DocumentLock): void {
    if (this.freshSingles.length === 0) {
      setImmediate(() => {
        const locks = this.freshSingles;
        this.freshSingles = [];
        void acquireInBatches(this.context, locks, { mayLinger: true });
      });
    }
    this.freshSingles.push(lock);
  }

  private lockFor(key: LockKey, fresh: DocumentLock[]): DocumentLock {
    const docPath = this.documentPathOf(key);
    const existing = this.locks.get(docPath);
    if (existing !== undefined) return existing;
    const lock = new DocumentLock(this.context, key, docPath);
    this.locks.set(docPath, lock);
    fresh.push(lock);
    return lock;
  }

  /**
   * `documentPath(root, key)`. A bulk's keys name one index or a few, one after the other: the
   * index's part of the path is made once per run of keys, not once per key.
   */
  private documentPathOf(key: LockKey): string {
    if (this.lastIndex?.name !== key.index) this.lastIndex = { name: key.index, pathPrefix: `${indexPath(this.root, key.index)}/` };
    return this.lastIndex.pathPrefix + encodeSegment(key.id);
  }

  /** What this process knows better than ZooKeeper: its current local holder and local waiters. */
  private withLocal(inspection: ZkInspection): LockInspection {
    const { holderData } = inspection;
    const plain: LockInspection = { key: inspection.key, holder: inspection.holder, queue: inspection.queue.map(({ entryGuid: _guid, ...waiter }) => waiter) };
    const local = this.locks.get(documentPath(this.root, inspection.key));
    if (local === undefined) return plain;
    const ours = holderData?.guid === local.guid;
    const holder = ours ? local.holder : null;
    const request = holder?.group.request;
    const waiters: LockWaiterInfo[] = local.localWaiters().map((member) => ({
      priority: member.priority,
      owner: member.group.request.owner,
      entry: 'local',
    }));
    return {
      key: inspection.key,
      holder: holder === null || request === undefined ? plain.holder : { owner: request.owner, priority: holder.priority, since: holder.acquiredAt, message: request.message ?? '' },
      queue: [...inspection.queue.filter((waiter) => waiter.entryGuid !== local.guid).map(({ entryGuid: _guid, ...waiter }) => waiter), ...waiters],
    };
  }

  private ready(signal: CancelSignal | undefined): void {
    if (this.closed) throw new LockUnavailableError('lock engine closed');
    this.session.throwIfUnavailable();
    throwIfCancelled(signal);
  }

  /**
   * Runs an operator's read or action on the connected session; a connection lost under it (or
   * a handle that just ended, before its session events arrived) is retried on the next link.
   */
  private async withLink<T>(body: (link: Link) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const timeout = AbortSignal.timeout(Math.max(1, this.settings.connectionRetry) * Math.max(1, this.settings.connectionDelayMs));
      const link = await this.connection.whenConnected(timeout);
      if (link === null) throw new LockUnavailableError('ZooKeeper not connected');
      try {
        return await body(link);
      } catch (error) {
        const zkError = error instanceof ZkError ? error : null;
        if (zkError === null || !(zkError.connectionLost || zkError.sessionGone) || attempt >= OPERATOR_ATTEMPTS) throw error;
        await this.connection.settle();
      }
    }
  }

  private onMarginExceeded(generation: number): void {
    for (const lock of this.locks.values()) lock.marginExceeded(generation);
  }

  private onExpired(generation: number): void {
    this.context.events.sessionExpired();
    const expired = new LockUnavailableError('ZooKeeper session expired while waiting for the lock');
    for (const [docPath, lock] of [...this.locks]) {
      if (lock.generation > generation) continue;
      this.locks.delete(docPath);
      lock.end(expired, 'ZooKeeper session expired');
    }
  }
}
