import type { Logger } from 'pino';
import type { LockEngineStats } from './lock-stats.js';
import { parseNodeData } from './lock-node-data.js';
import { parseEntryName } from './queue-order.js';
import { type ZkClient, childrenOrEmpty } from './zk-client.js';
import { ZkError, isZkCode, toZkError } from './zk-errors.js';
import type { SessionLease, ZkSession } from './zk-session.js';
import { PRIVATE_LOCK } from './znode-names.js';

/** What one acquisition attempt may have left under its document node. */
export interface CleanupTask {
  readonly docPath: string;
  readonly guid: string;
  /** Session generation that created the nodes; once it is gone so are they. */
  readonly generation: number;
  /** We hold `privateLock` and nobody else can have replaced it. */
  readonly privateLock: boolean;
  readonly entry: string | null;
  /** A create's reply was lost or abandoned: find our nodes by guid and session instead. */
  sweep: boolean;
}

interface Pending {
  readonly task: CleanupTask;
  readonly resolve: () => void;
}

const RETRY_DELAY_MS = 200;

/**
 * Guaranteed deletion (CURATOR-678): a task stays here until its nodes are deleted or the
 * session that owned them is gone, across any number of connection losses. Local state is
 * never dropped while the node may still exist.
 */
export class ReleaseQueue {
  private readonly session: ZkSession;
  private readonly logger: Logger;
  private readonly stats: LockEngineStats;
  private readonly waiting = new Set<Pending>();
  private readonly running = new Set<Promise<void>>();

  constructor(session: ZkSession, logger: Logger, stats: LockEngineStats) {
    this.session = session;
    this.logger = logger;
    this.stats = stats;
  }

  run(task: CleanupTask): Promise<void> {
    return new Promise((resolve) => this.attempt({ task, resolve }));
  }

  /** Called on every (re)connect of the current session. */
  onConnected(lease: SessionLease): void {
    for (const pending of [...this.waiting]) {
      this.waiting.delete(pending);
      if (pending.task.generation === lease.generation) this.attempt(pending);
      else pending.resolve();
    }
  }

  /** The session of `generation` ended: its ephemeral nodes are gone. */
  onExpired(generation: number): void {
    for (const pending of [...this.waiting]) {
      if (pending.task.generation > generation) continue;
      this.waiting.delete(pending);
      pending.resolve();
    }
  }

  /** Waits (bounded) for in-flight deletions, e.g. before closing the session. */
  async drain(timeoutMs: number): Promise<void> {
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
    await Promise.race([Promise.allSettled([...this.running]), deadline]);
  }

  /** Resolves every task still waiting: the session is being closed, which deletes them. */
  abandonAll(): void {
    for (const pending of this.waiting) pending.resolve();
    this.waiting.clear();
  }

  private attempt(pending: Pending): void {
    const lease = this.session.current();
    if (this.session.currentGeneration() !== pending.task.generation) {
      pending.resolve();
      return;
    }
    if (lease === null) {
      this.waiting.add(pending);
      return;
    }
    const run = this.execute(lease.client, pending.task).then(
      () => pending.resolve(),
      (error: unknown) => this.retryLater(pending, toZkError(error)),
    );
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  private retryLater(pending: Pending, error: ZkError): void {
    if (error.sessionGone) {
      pending.resolve();
      return;
    }
    this.stats.releaseRetries++;
    pending.task.sweep = true;
    if (!error.connectionLost) {
      this.logger.warn({ err: error, path: pending.task.docPath }, 'lock node deletion failed; retrying');
    }
    setTimeout(() => {
      if (this.session.current() === null) this.waiting.add(pending);
      else this.attempt(pending);
    }, RETRY_DELAY_MS).unref();
  }

  private async execute(client: ZkClient, task: CleanupTask): Promise<void> {
    if (task.sweep) {
      await sweepByGuid(client, task.docPath, task.guid);
      return;
    }
    const deletions: Promise<void>[] = [];
    if (task.privateLock) deletions.push(deleteIfPresent(client, `${task.docPath}/${PRIVATE_LOCK}`));
    if (task.entry !== null) deletions.push(deleteIfPresent(client, `${task.docPath}/${task.entry}`));
    const results = await Promise.allSettled(deletions);
    for (const result of results) if (result.status === 'rejected') throw result.reason;
  }
}

async function deleteIfPresent(client: ZkClient, path: string, version = -1): Promise<void> {
  try {
    await client.delete(path, version);
  } catch (error) {
    if (!isZkCode(error, 'NONODE')) throw error;
  }
}

/**
 * Deletes every child of `docPath` written by this attempt (guid) in this session. Pipelined
 * behind any request still in flight on the same session, so it sees that request's effect.
 */
async function sweepByGuid(client: ZkClient, docPath: string, guid: string): Promise<void> {
  const children = await childrenOrEmpty(client, docPath);
  const candidates = children.filter((child) => child === PRIVATE_LOCK || parseEntryName(child) !== null);
  const mine = await findOwn(client, docPath, guid, candidates);
  // privateLock first: the head waiter watches it.
  mine.sort((a, b) => (a.name === PRIVATE_LOCK ? -1 : b.name === PRIVATE_LOCK ? 1 : 0));
  await Promise.all(mine.map((node) => deleteIfPresent(client, `${docPath}/${node.name}`, node.version)));
}

/** Children of `docPath` among `candidates` that carry `guid` and belong to this session. */
export async function findOwn(
  client: ZkClient,
  docPath: string,
  guid: string,
  candidates: readonly string[],
): Promise<{ name: string; version: number }[]> {
  const reads = await Promise.allSettled(candidates.map((name) => client.get(`${docPath}/${name}`)));
  const mine: { name: string; version: number }[] = [];
  reads.forEach((read, i) => {
    const name = candidates[i];
    if (name === undefined) return;
    if (read.status === 'rejected') {
      if (!isZkCode(read.reason, 'NONODE')) throw read.reason;
      return;
    }
    const owned = read.value.stat.ephemeralOwner === client.sessionId;
    if (owned && parseNodeData(read.value.data).guid === guid) mine.push({ name, version: read.value.stat.version });
  });
  return mine;
}
