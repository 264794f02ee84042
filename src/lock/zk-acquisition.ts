import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { HeldLockHandle } from './held-lock.js';
import type { AcquireOptions, LockKey, Priority } from './lock-engine.js';
import { LockTimeoutError, LockUnavailableError } from './lock-errors.js';
import { encodeNodeData, parseNodeData } from './lock-node-data.js';
import type { LockEngineStats } from './lock-stats.js';
import { type PrefixRanks, type QueueEntry, prefixFor, queueFromChildren, rankOf } from './queue-order.js';
import { type WatchEventType, type ZkClient, childrenOrEmpty } from './zk-client.js';
import { type ContainerCache, type ContentionHints, type ParentNode, parentChain } from './zk-containers.js';
import { ZkError, isZkCode, toZkError } from './zk-errors.js';
import { type CleanupTask, type ReleaseQueue, findOwn } from './zk-release-queue.js';
import type { SessionLease, ZkSession } from './zk-session.js';
import { PRIVATE_LOCK, documentPath, indexPath } from './znode-names.js';

export interface AcquisitionContext {
  readonly root: string;
  readonly prefixes: PrefixRanks;
  readonly stats: LockEngineStats;
  readonly session: ZkSession;
  readonly releases: ReleaseQueue;
  readonly containers: ContainerCache;
  readonly contention: ContentionHints;
  readonly logger: Logger;
  readonly sessionTimeoutMs: number;
  readonly started: (attempt: Acquisition) => void;
  readonly finished: (attempt: Acquisition) => void;
  readonly granted: (attempt: Acquisition, held: HeldLockHandle) => void;
  readonly released: (attempt: Acquisition) => void;
}

/** A batch answer we could not interpret because the connection dropped under it. */
class ConnectionDropped extends Error {}

const MAX_CONTAINER_RETRIES = 5;
/** See watchHeldPrivateLock. */
const HOLDER_WATCH_DELAY_MS = 100;

/**
 * One acquisition attempt of one key (see README "Lock algorithm").
 *
 * Fast path (uncontended): one pipelined round trip [create containers if unknown, getChildren,
 * create privateLock, getWatched privateLock]. The children are read before the create, so if
 * they show a queue entry that precedes us (same or higher priority), we arrived after it and
 * step back by deleting privateLock.
 *
 * Queue path: an EPHEMERAL_SEQUENTIAL entry `<prefix>-<seq>` (data carries the attempt guid),
 * then: head of the (prefix, seq) order and privateLock free -> create privateLock; head and
 * privateLock held -> watch privateLock; otherwise watch the predecessor entry only.
 * privateLock is the mutex: only its creator holds the lock, whatever anybody's view of the
 * queue order is, which is what keeps a client of the original algorithm mutually exclusive
 * with this one.
 */
export class Acquisition {
  readonly key: LockKey;
  readonly priority: Priority;
  readonly guid = randomUUID();
  readonly docPath: string;
  private readonly ctx: AcquisitionContext;
  private readonly options: AcquireOptions;
  private readonly prefix: string;
  private readonly privatePath: string;
  private readonly containerPaths: readonly ParentNode[];
  private readonly startedAt = Date.now();
  private readonly stop = new AbortController();
  private readonly stopped: Promise<never>;
  private lease: SessionLease | null = null;
  private entry: string | null = null;
  private ownsPrivateLock = false;
  /** A create may have happened that we did not see the reply of. */
  private uncertain = false;
  private holderWatchSet = false;
  private privateLockGone = false;
  private positionOnArrival: number | null = null;
  private notifications = 0;
  private notify: (() => void) | null = null;
  private held: HeldLockHandle | null = null;

  constructor(ctx: AcquisitionContext, key: LockKey, priority: Priority, options: AcquireOptions) {
    this.ctx = ctx;
    this.key = key;
    this.priority = priority;
    this.options = options;
    this.prefix = prefixFor(priority, ctx.prefixes);
    this.docPath = documentPath(ctx.root, key);
    this.privatePath = `${this.docPath}/${PRIVATE_LOCK}`;
    this.containerPaths = parentChain(ctx.root, indexPath(ctx.root, key.index), this.docPath);
    this.stopped = new Promise<never>((_, reject) => {
      this.stop.signal.addEventListener('abort', () => reject(this.stop.signal.reason), { once: true });
    });
    this.stopped.catch(() => undefined);
  }

  get generation(): number | null {
    return this.lease?.generation ?? null;
  }

  /** Ends the wait (session expired, engine closing); the acquisition rejects with `reason`. */
  abort(reason: Error): void {
    if (!this.stop.signal.aborted) this.stop.abort(reason);
  }

  /** Waits in the queue until granted, timed out, aborted or the session is lost. */
  run(): Promise<HeldLockHandle> {
    return this.guard(async () => (await this.fastPath(false)) ?? (await this.queuePath()));
  }

  /** One non-waiting attempt (acquireMany's opportunistic phase): null when anyone is in the way. */
  tryOnce(): Promise<HeldLockHandle | null> {
    return this.guard(() => this.fastPath(true));
  }

  private async guard<T>(body: () => Promise<T>): Promise<T> {
    this.ctx.started(this);
    const timer = setTimeout(() => this.abort(new LockTimeoutError(this.key, this.options.timeoutMs)), this.options.timeoutMs);
    const onAbort = (): void => this.abort(this.options.signal?.reason instanceof Error ? this.options.signal.reason : new Error('aborted'));
    this.options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (this.options.signal?.aborted === true) onAbort();
      this.lease = await this.race(this.ctx.session.connected(this.stop.signal));
      return await body();
    } catch (error) {
      const reason = this.stop.signal.aborted ? this.stop.signal.reason : error;
      await this.cleanup();
      throw this.publicError(reason);
    } finally {
      clearTimeout(timer);
      this.options.signal?.removeEventListener('abort', onAbort);
      this.ctx.finished(this);
    }
  }

  private publicError(reason: unknown): unknown {
    if (reason instanceof LockTimeoutError) this.ctx.stats.timeouts++;
    else if (this.options.signal?.aborted === true && reason === this.options.signal.reason) this.ctx.stats.aborts++;
    if (reason instanceof ZkError) {
      return new LockUnavailableError(`ZooKeeper error while acquiring ${this.key.index}/${this.key.id}: ${reason.code}`, { cause: reason });
    }
    return reason;
  }

  private race<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([promise, this.stopped]);
  }

  private client(): ZkClient {
    const lease = this.lease;
    if (lease === null || this.ctx.session.currentGeneration() !== lease.generation) {
      throw new LockUnavailableError('ZooKeeper session expired while acquiring');
    }
    return lease.client;
  }

  private nodeData(entry: string | null): string {
    return encodeNodeData({
      guid: this.guid,
      owner: this.options.owner,
      priority: this.priority,
      acquiredAt: Date.now(),
      message: this.options.message ?? '',
      entry,
    });
  }

  private onWatch(type: WatchEventType, path: string): void {
    if (path === this.privatePath && type === 'deleted' && this.held !== null && !this.held.releasing) {
      this.privateLockGone = true;
      this.ownsPrivateLock = false;
      this.ctx.stats.lost++;
      this.held.markLost('privateLock was deleted (forced release)');
    }
    this.notifications++;
    this.notify?.();
  }

  private watch(path: string): (type: WatchEventType) => void {
    return (type) => this.onWatch(type, path);
  }

  private async waitForNotification(since: number): Promise<void> {
    if (this.notifications > since) return;
    try {
      await this.race(new Promise<void>((resolve) => (this.notify = resolve)));
    } finally {
      this.notify = null;
    }
  }

  /** Any entry that is served before a newcomer of our priority (same or higher priority). */
  private precedesNewcomer(entry: QueueEntry): boolean {
    return rankOf(entry.prefix, this.ctx.prefixes) <= rankOf(this.prefix, this.ctx.prefixes);
  }

  private async fastPath(tryOnly: boolean): Promise<HeldLockHandle | null> {
    if (!tryOnly && this.ctx.contention.contended(this.docPath)) return null;
    for (let attempt = 0; attempt < MAX_CONTAINER_RETRIES; attempt++) {
      const client = this.client();
      const containers = this.ctx.containers.ensure(client, this.containerPaths);
      const children = client.getChildren(this.docPath);
      this.uncertain = true;
      const created = client.create(this.privatePath, this.nodeData(null), 'ephemeral');
      const [parents, kids, made] = await this.race(Promise.allSettled([containers, children, created]));
      if (made.status === 'fulfilled') {
        this.uncertain = false;
        this.ownsPrivateLock = true;
        if (kids.status === 'rejected') return this.stepBackUnlessHead();
        const held = await this.holdUnlessPreceded(kids.value);
        if (held !== null) this.ctx.stats.fastPathAcquisitions++;
        return held;
      }
      const error = toZkError(made.reason);
      if (error.connectionLost) {
        await this.recover();
        // Our create may have gone through before the drop; keep it only if we still come first.
        return this.ownsPrivateLock ? this.stepBackUnlessHead() : null;
      }
      this.uncertain = false;
      if (isZkCode(error, 'NODEEXISTS')) {
        this.ctx.contention.mark(this.docPath);
        return null;
      }
      if (!isZkCode(error, 'NONODE')) throw error;
      this.documentMissing(parents);
    }
    throw this.documentKeepsDisappearing();
  }

  /**
   * A create under the document node failed with NONODE: the container was reaped under us, so
   * forget it and retry, unless creating the parents failed for a reason a retry will not fix.
   */
  private documentMissing(parents: PromiseSettledResult<void>): void {
    this.ctx.containers.forget(this.containerPaths);
    const reason: unknown = parents.status === 'rejected' ? parents.reason : null;
    if (reason !== null && !toZkError(reason).connectionLost && !isZkCode(reason, 'NONODE')) throw reason;
  }

  private documentKeepsDisappearing(): LockUnavailableError {
    return new LockUnavailableError(`document node ${this.docPath} keeps disappearing`);
  }

  /** After a recovery found our privateLock: hold it if nobody precedes us, else give it back. */
  private async stepBackUnlessHead(): Promise<HeldLockHandle | null> {
    return this.holdUnlessPreceded(await this.race(this.client().getChildren(this.docPath)));
  }

  /** We own privateLock without a queue entry: keep it only if `children` show nobody served first. */
  private async holdUnlessPreceded(children: readonly string[]): Promise<HeldLockHandle | null> {
    if (queueFromChildren(children, this.ctx.prefixes).some((entry) => this.precedesNewcomer(entry))) {
      await this.stepBack();
      return null;
    }
    this.positionOnArrival = 0;
    return this.grant();
  }

  private async stepBack(): Promise<void> {
    this.ctx.stats.stepBacks++;
    this.ctx.contention.mark(this.docPath);
    try {
      await this.race(this.client().delete(this.privatePath));
      this.ownsPrivateLock = false;
      this.holderWatchSet = false;
    } catch (error) {
      if (!isZkCode(error, 'NONODE')) throw error;
      this.ownsPrivateLock = false;
    }
  }

  /** Creates the queue entry (and reads the queue in the same round trip), then waits. */
  private async queuePath(): Promise<HeldLockHandle> {
    let children: string[] | null = null;
    for (let attempt = 0; this.entry === null; attempt++) {
      if (attempt >= MAX_CONTAINER_RETRIES) throw this.documentKeepsDisappearing();
      const client = this.client();
      const containers = this.ctx.containers.ensure(client, this.containerPaths);
      this.uncertain = true;
      const created = client.create(`${this.docPath}/${this.prefix}-`, this.nodeData(null), 'ephemeralSequential');
      const listed = client.getChildren(this.docPath);
      const [parents, made, kids] = await this.race(Promise.allSettled([containers, created, listed]));
      if (made.status === 'fulfilled') {
        this.uncertain = false;
        this.entry = made.value.slice(made.value.lastIndexOf('/') + 1);
        if (kids.status === 'fulfilled') children = kids.value;
        break;
      }
      const error = toZkError(made.reason);
      if (error.connectionLost) {
        children = await this.recover();
        continue;
      }
      this.uncertain = false;
      if (!isZkCode(error, 'NONODE')) throw error;
      this.documentMissing(parents);
    }
    return this.waitLoop(children);
  }

  /**
   * The waiting state machine. Each round starts from a fresh children list; `speculate` adds a
   * privateLock create to that same round trip when we are likely to be head (we were head, or
   * our predecessor was the head) so a hand-over costs one round trip after the notification.
   */
  private async waitLoop(initialChildren: string[] | null): Promise<HeldLockHandle> {
    let children = initialChildren;
    let speculate = false;
    for (;;) {
      let privateWatchEpoch: number | null = null;
      if (children === null || speculate) {
        try {
          const round = await this.readRound(speculate);
          children = round.children;
          privateWatchEpoch = round.privateWatchEpoch;
        } catch (error) {
          if (!(error instanceof ConnectionDropped)) throw error;
          children = await this.recover();
        }
      }
      if (this.entry === null && !this.ownsPrivateLock) return this.queuePath();
      const queue = queueFromChildren(children, this.ctx.prefixes);
      const position = this.entry === null ? 0 : queue.findIndex((entry) => entry.name === this.entry);
      if (position < 0) {
        // Our entry was deleted under us while the session lives (operator action): queue again.
        this.entry = null;
        if (this.ownsPrivateLock) await this.stepBack();
        return this.queuePath();
      }
      const ahead = queue.slice(0, position);
      this.positionOnArrival ??= ahead.length + (ahead.length === 0 && children.includes(PRIVATE_LOCK) && !this.ownsPrivateLock ? 1 : 0);
      if (this.ownsPrivateLock) {
        if (ahead.length === 0) return this.grant();
        await this.stepBack();
      }
      if (ahead.length === 0) {
        const lockVisible = children.includes(PRIVATE_LOCK);
        children = null;
        speculate = true;
        if (!lockVisible && privateWatchEpoch === null) continue;
        await this.waitOn(this.privatePath, privateWatchEpoch);
        continue;
      }
      children = null;
      const predecessor = ahead[ahead.length - 1];
      speculate = ahead.length === 1;
      if (predecessor !== undefined) await this.waitOn(`${this.docPath}/${predecessor.name}`, null);
    }
  }

  /** [getChildren] or [getChildren, create privateLock, getWatched privateLock] in one round trip. */
  private async readRound(speculate: boolean): Promise<{ children: string[]; privateWatchEpoch: number | null }> {
    const client = this.client();
    const epoch = this.notifications;
    const listed = client.getChildren(this.docPath);
    if (!speculate) {
      try {
        return { children: await this.race(listed), privateWatchEpoch: null };
      } catch (error) {
        throw this.classify(error);
      }
    }
    this.uncertain = true;
    const created = client.create(this.privatePath, this.nodeData(this.entry), 'ephemeral');
    const watched = client.getWatched(this.privatePath, this.watch(this.privatePath));
    const [kids, made, seen] = await this.race(Promise.allSettled([listed, created, watched]));
    if (made.status === 'fulfilled') {
      this.ownsPrivateLock = true;
      this.holderWatchSet = seen.status === 'fulfilled';
    } else if (!isZkCode(toZkError(made.reason), 'NODEEXISTS')) {
      throw this.classify(made.reason);
    }
    this.uncertain = false;
    if (kids.status === 'rejected') throw this.classify(kids.reason);
    return { children: kids.value, privateWatchEpoch: seen.status === 'fulfilled' && !this.ownsPrivateLock ? epoch : null };
  }

  private classify(error: unknown): Error {
    const zkError = toZkError(error);
    if (zkError.connectionLost) return new ConnectionDropped(zkError.message);
    if (zkError.sessionGone) return new LockUnavailableError('ZooKeeper session ended while acquiring', { cause: zkError });
    return zkError;
  }

  /** Leaves a watch on `path` (unless one was set at `epoch`) and waits for any event on it. */
  private async waitOn(path: string, epoch: number | null): Promise<void> {
    let since = epoch;
    if (since === null) {
      since = this.notifications;
      try {
        await this.race(this.client().getWatched(path, this.watch(path)));
      } catch (error) {
        if (isZkCode(error, 'NONODE')) return;
        const classified = this.classify(error);
        if (classified instanceof ConnectionDropped) return;
        throw classified;
      }
    }
    await this.waitForNotification(since);
  }

  /**
   * After a connection loss inside the session: find what our lost requests did (nodes carrying
   * our guid, owned by our session) instead of leaving an orphan entry behind.
   */
  private async recover(): Promise<string[]> {
    for (;;) {
      const lease = await this.race(this.ctx.session.connected(this.stop.signal));
      if (this.lease !== null && lease.generation !== this.lease.generation) {
        this.entry = null;
        this.ownsPrivateLock = false;
        this.uncertain = false;
        throw new LockUnavailableError('ZooKeeper session expired while acquiring');
      }
      try {
        const children = await this.race(childrenOrEmpty(lease.client, this.docPath));
        const candidates = children.filter((child) => child === PRIVATE_LOCK || child.startsWith(`${this.prefix}-`));
        const mine = await this.race(findOwn(lease.client, this.docPath, this.guid, candidates));
        this.ownsPrivateLock = mine.some((node) => node.name === PRIVATE_LOCK);
        this.holderWatchSet = false;
        this.entry = mine.find((node) => node.name !== PRIVATE_LOCK)?.name ?? null;
        this.uncertain = false;
        return children;
      } catch (error) {
        if (!toZkError(error).connectionLost) throw error;
      }
    }
  }

  private grant(): HeldLockHandle {
    const now = Date.now();
    const held = new HeldLockHandle({
      key: this.key,
      priority: this.priority,
      acquiredAt: now,
      waitMs: now - this.startedAt,
      queuePositionOnArrival: this.positionOnArrival ?? 0,
      release: () => this.release(),
    });
    this.held = held;
    this.ctx.stats.acquisitions++;
    this.ctx.granted(this, held);
    if (!this.holderWatchSet) this.watchHeldPrivateLock();
    this.leaveQueueWhileHolding();
    return held;
  }

  /**
   * privateLock alone now says who holds the lock, so the entry goes right away (off the
   * request path): the next waiter becomes head and watches privateLock, and the release is a
   * single delete, which shortens every hand-over by one commit.
   */
  private leaveQueueWhileHolding(): void {
    const entry = this.entry;
    const lease = this.lease;
    if (entry === null || lease === null) return;
    this.entry = null;
    const task: CleanupTask = { docPath: this.docPath, guid: this.guid, generation: lease.generation, privateLock: false, entry, sweep: false };
    void this.ctx.releases.run(task);
  }

  /**
   * Holder-side watch so an operator's forced release in another process reaches us. Armed a
   * little after the grant so short holds (the common case) cost no extra request; a release
   * forced before it is armed is still detected when it is (node gone or not ours any more).
   */
  private watchHeldPrivateLock(): void {
    const timer = setTimeout(() => {
      const lease = this.lease;
      if (lease === null || this.held === null || this.held.releasing || this.held.lost.aborted) return;
      lease.client.getWatched(this.privatePath, this.watch(this.privatePath)).then(
        (node) => {
          if (parseNodeData(node.data).guid !== this.guid) this.onWatch('deleted', this.privatePath);
          else this.holderWatchSet = true;
        },
        (error: unknown) => {
          if (isZkCode(error, 'NONODE')) this.onWatch('deleted', this.privatePath);
        },
      );
    }, HOLDER_WATCH_DELAY_MS);
    timer.unref();
  }

  /** The lock was declared lost by the engine (session trouble): stop trusting privateLock. */
  markLost(reason: string): void {
    if (this.held?.markLost(reason) === true) this.ctx.stats.lost++;
  }

  private async release(): Promise<void> {
    this.ctx.released(this);
    const lease = this.lease;
    if (lease === null) return;
    await this.ctx.releases.run(this.cleanupTask(lease.generation, !this.privateLockGone));
    this.ctx.stats.releases++;
  }

  private cleanupTask(generation: number, privateLock: boolean): CleanupTask {
    return { docPath: this.docPath, guid: this.guid, generation, privateLock, entry: this.entry, sweep: this.uncertain };
  }

  /** Leaves no node behind before the caller sees the failure (bounded while disconnected). */
  private async cleanup(): Promise<void> {
    const lease = this.lease;
    if (lease === null) return;
    if (!this.ownsPrivateLock && this.entry === null && !this.uncertain) return;
    const done = this.ctx.releases.run(this.cleanupTask(lease.generation, this.ownsPrivateLock));
    this.entry = null;
    this.ownsPrivateLock = false;
    if (this.ctx.session.current()?.generation !== lease.generation) return;
    const bound = new Promise<void>((resolve) => setTimeout(resolve, this.ctx.sessionTimeoutMs).unref());
    await Promise.race([done, bound]);
  }
}
