import { ProxyError } from '../../src/errors/proxy-error.js';
import { LockUnavailableError } from '../../src/lock/lock-errors.js';
import { ZkError } from '../../src/zookeeper-client/zk-errors.js';
import type { HeldLock, Priority } from '../../src/lock/lock-engine.js';
import { keyString } from '../../src/lock/lock-key.js';
import { keyOfDocument } from '../../src/lock/zookeeper/znode-names.js';
import { ROOT } from './sim-world.js';

/** One grant an actor holds, from the engine's callback to the actor's release. */
export interface Grant {
  readonly id: number;
  readonly engine: number;
  readonly key: string;
  readonly held: HeldLock;
  readonly at: number;
  /** The server session the engine held it on. */
  readonly sessionId: string;
  /** A single acquisition's grant (not a bulk's key, not the original client's): its lock watches its privateLock. */
  readonly single: boolean;
}

/** A queue entry as the checker sees it. */
export interface QueueEntryView {
  readonly name: string;
  readonly czxid: number;
  readonly owner: string;
  /** Run time (ms) of its creation. */
  readonly ctime: number;
}

/** The hand-over bound the engines run with (`zookeeper.lock.handover.max.count` / `.max.ms`). */
export interface HandOverLimits {
  readonly maxCount: number;
  readonly maxMs: number;
}

/** What the checker reads of the simulated server. */
export interface ServerView {
  sessionAlive(id: string): boolean;
  lastZxid(): number;
  /** The zxid as of which a session last read a document's queue (0: never); strict: counted from the server's answer, not its arrival. */
  childrenReadZxid(sessionId: string, key: string): number;
  /** Queue entries of a document (not privateLock): name, czxid, owner session, creation time. */
  queue(key: string): readonly QueueEntryView[];
  /** Every queue entry a session ever had under a document: czxid and the zxid that deleted it (null: alive). */
  entryHistory(sessionId: string, key: string): readonly { readonly name: string; readonly czxid: number; readonly removedZxid: number | null }[];
  /** The document's privateLock now: its czxid and owner session; null when there is none. Absent: not checked. */
  privateLock?(key: string): { readonly czxid: number; readonly owner: string } | null;
}

const rankOfPriority = (priority: Priority): number => (priority === 'foreground' ? 0 : 1);
const rankOfEntry = (name: string): number => (name.startsWith('A-') ? 0 : name.startsWith('B-') ? 1 : 2);

/** One acquisition an actor started, until it settles. */
export interface Wait {
  readonly id: number;
  readonly engine: number;
  readonly key: string;
  readonly priority: Priority;
  readonly startedAt: number;
  readonly timeoutMs: number;
  /** The server's last zxid when the wait began: a queue entry with a smaller czxid was there first. */
  readonly startZxid: number;
  settledAt: number | null;
  /** The client went away (its cancellation fired): it no longer waits, whatever the engine is still doing. */
  cancelledAt: number | null;
  /** A key of `acquireEach`: a failure is seen only when the whole bulk resolves. */
  readonly bulk: boolean;
}

/** The reason an actor's cancellation carries: a typed answer of its own. */
export class ClientGone extends Error {
  constructor() {
    super('client gone');
    this.name = 'ClientGone';
  }
}

/**
 * A privateLock by its document and czxid: one transaction (a bulk's batch) creates the
 * privateLocks of several documents with one zxid, so a czxid alone names none of them.
 */
export function lockId(key: string, czxid: number): string {
  return `${key}#${czxid}`;
}

/** The lock key (`index/id`) of a privateLock's path under the simulation's root. */
function keyOfLockPath(path: string): string {
  return keyString(keyOfDocument(ROOT, path.slice(0, path.lastIndexOf('/'))));
}

/**
 * The history checker: what every engine granted and what every actor waits for, and the
 * invariants over them, checked after every simulated event and at the end of a run.
 */
export class Ledger {
  readonly violations: string[] = [];
  private readonly active = new Map<number, Grant>();
  private readonly waits = new Map<number, Wait>();
  /** The latest grant per engine and key, for the hand-over check. */
  private readonly lastGrant = new Map<string, Grant>();
  /** privateLocks an operator took away (lockId): their holders no longer count. */
  private readonly forcedTokens = new Set<string>();
  /** Later background grants that went ahead of each foreign foreground queue entry. */
  private readonly passes = new Map<string, number>();
  /** Local hand-overs ahead of each foreign entry of their rank or better, per engine and ZooKeeper grant (fencing token). */
  private readonly localPasses = new Map<string, number>();
  /** When each engine's ZooKeeper grant (by fencing token) was first given to a request. */
  private readonly zkGrantAt = new Map<string, number>();
  /** privateLocks an operator deleted by hand (lockId), and when. */
  readonly handDeleted = new Map<string, number>();
  private readonly limits: HandOverLimits | null;
  private nextId = 1;
  readonly now: () => number;
  private readonly settleBoundMs: number;
  private readonly server: ServerView;
  private readonly passBound: number;
  /** Engines are numbered from 0; numbers from here on are clients of the original algorithm (no local queue). */
  private readonly engines: number;

  /** `passBound`: how many later background requests may go ahead of a queued foreground one (the hand-over bound, and those in flight while its entry's watch event travels). */
  constructor(now: () => number, settleBoundMs: number, server: ServerView, passBound: number, engines: number, limits: HandOverLimits | null = null) {
    this.engines = engines;
    this.limits = limits;
    this.now = now;
    this.settleBoundMs = settleBoundMs;
    this.server = server;
    this.passBound = passBound;
  }

  violate(what: string): void {
    if (this.violations.length < 20) this.violations.push(`t=${this.now()} ${what}`);
  }

  /** Acquisitions asked of each engine so far (a bulk's keys one each). */
  readonly asked = new Map<number, number>();

  startWait(engine: number, key: string, priority: Priority, timeoutMs: number, bulk = false): Wait {
    this.asked.set(engine, (this.asked.get(engine) ?? 0) + 1);
    const wait: Wait = { id: this.nextId++, engine, key, priority, startedAt: this.now(), timeoutMs, startZxid: this.server.lastZxid(), settledAt: null, cancelledAt: null, bulk };
    this.waits.set(wait.id, wait);
    return wait;
  }

  /** The wait ended (granted or failed). A failure must be a typed answer, in time. */
  settle(wait: Wait, error: unknown): void {
    if (wait.settledAt !== null) {
      this.violate(`wait ${wait.id} (${wait.key} on engine ${wait.engine}) settled twice`);
      return;
    }
    wait.settledAt = this.now();
    this.waits.delete(wait.id);
    const took = wait.settledAt - wait.startedAt;
    if (took > wait.timeoutMs + this.settleBoundMs) {
      this.violate(`liveness: ${wait.key} on engine ${wait.engine} settled after ${took} ms (timeout ${wait.timeoutMs} ms)`);
    }
    if (error !== null && !(error instanceof ProxyError) && !(error instanceof ClientGone)) {
      this.violate(`untyped failure of ${wait.key} on engine ${wait.engine}: ${String(error)}`);
    }
    // 503 only once the lock service is declared unavailable (docs/guarantees.md, "A blip is not an outage"):
    // an engine connected all along since the wait began answers it, or times it out — unless ZooKeeper
    // itself refused one of its requests as a whole (THROTTLEDOP: the server turns work away).
    const downAt = this.downAt.get(wait.engine);
    const refusedByServer = error instanceof Error && error.cause instanceof ZkError && error.cause.code === 'THROTTLEDOP';
    if (error instanceof LockUnavailableError && !refusedByServer && downAt !== undefined && downAt < wait.startedAt) {
      this.violate(`unavailable without an outage: ${wait.key} on engine ${wait.engine} failed (${error.message}) with its link up since before the wait began`);
    }
  }

  /** When each engine was last not connected (Infinity: it is not connected now). Absent: not tracked. */
  private readonly downAt = new Map<number, number>();

  /** An engine's state changed: `connected` or not (suspended, unavailable, closed; not yet connected at the start). */
  engineState(engine: number, connected: boolean): void {
    if (!connected) this.downAt.set(engine, Number.POSITIVE_INFINITY);
    else if (this.downAt.get(engine) === Number.POSITIVE_INFINITY) this.downAt.set(engine, this.now());
  }

  granted(engine: number, sessionId: string, held: HeldLock, wait: Wait | undefined, waiting: readonly Wait[]): Grant {
    const key = keyString(held.key);
    const single = wait !== undefined && !wait.bulk && engine < this.engines;
    const grant: Grant = { id: this.nextId++, engine, key, held, at: this.now(), sessionId, single };
    this.checkOccupied(grant);
    if (wait !== undefined && held.priority === 'background') this.checkPassing(grant, wait);
    if (engine < this.engines) {
      this.checkBacked(grant);
      this.checkLocalOrder(grant, wait, waiting);
      this.checkSameRankOrder(grant);
      this.checkHandOverBound(grant);
    }
    if (held.isLost) this.violate(`lost lock forwarded: ${key} granted on engine ${engine} already lost`);
    const previous = this.lastGrant.get(`${engine} ${key}`);
    if (held.handedOverLocally && previous !== undefined && previous.held.isLost) {
      this.violate(`lost lock handed over: ${key} on engine ${engine} passed on after grant ${previous.id} was lost`);
    }
    // A foreground wait of this engine that arrived first (and still waits: not timed out, not
    // cancelled, not a bulk's key, whose failure shows only with the bulk's answer) never sees a
    // later background one served before it.
    if (held.priority === 'background' && engine < this.engines) {
      const now = this.now();
      const stillWaits = (wait: Wait): boolean => !wait.bulk && wait.cancelledAt === null && wait.startedAt + wait.timeoutMs > now;
      const mine = waiting.find(
        (wait) => wait.engine === engine && wait.key === key && wait.priority === 'foreground' && wait.startedAt < now - held.waitMs && stillWaits(wait),
      );
      if (mine !== undefined) this.violate(`priority: ${key} on engine ${engine} served a background request before foreground wait ${mine.id}`);
    }
    this.lastGrant.set(`${engine} ${key}`, grant);
    this.active.set(grant.id, grant);
    return grant;
  }

  /** Grants actors hold now. */
  activeList(): Grant[] {
    return [...this.active.values()];
  }

  /** An operator's override (forced release or a hand deletion) took this privateLock away: its holders no longer count. */
  overridden(key: string, token: number): boolean {
    return this.forcedTokens.has(lockId(key, token));
  }

  private overriddenGrant(grant: Grant): boolean {
    return this.overridden(grant.key, grant.held.fencingToken);
  }

  /** Queue entries (by czxid) an operator deleted by hand: their owners keep the place they had. */
  private readonly entriesDeletedByHand = new Set<number>();

  /** Documents (`key session`) where an operator deleted a queue entry of that session by hand. */
  private readonly entryDeletedFor = new Set<string>();

  entryDeletedByHand(czxid: number, node?: { readonly path: string; readonly owner: string }): void {
    this.entriesDeletedByHand.add(czxid);
    if (node !== undefined) this.entryDeletedByOperator(node.path, node.owner);
  }

  /** An operator deleted the queue entry at `path` of session `owner`, by hand or with a forced release of its lock. */
  entryDeletedByOperator(path: string, owner: string): void {
    this.entryDeletedFor.add(`${keyOfLockPath(path)} ${owner}`);
  }

  /** An operator deleted a queue entry of `session` under `key` (by hand, or with a forced release): the holder there cannot see that waiter. */
  entryHandDeleted(key: string, session: string): boolean {
    return this.entryDeletedFor.has(`${key} ${session}`);
  }

  /** An operator deleted the privateLock with this czxid by hand (zkCli); `node`: its path and owner session, and the deletion's zxid. */
  deletedByHand(token: number, node: { readonly path: string; readonly owner: string; readonly zxid: number }): void {
    const id = lockId(keyOfLockPath(node.path), token);
    this.forcedTokens.add(id);
    this.handDeleted.set(id, this.now());
    this.handDeletedZxid.set(`${node.path} ${node.owner}`, node.zxid);
  }

  /** The zxid of an operator's latest deletion by hand of a session's privateLock, by path and owner. */
  private readonly handDeletedZxid = new Map<string, number>();

  /**
   * Session `by` deleted another session's privateLock (`czxid`) at `path` by name. When an operator
   * had deleted `by`'s own privateLock there by hand, and `by` sent that request before it had
   * received anything from the server as of that deletion (no watch event, no reply), it could not
   * know: that is the limit of a hand deletion (docs/guarantees.md) — ZooKeeper's conditions compare
   * data versions, and every holder's privateLock is at version 0 — and the grant it took away no
   * longer counts, as after an operator's override. Any later request is the engine's business.
   */
  foreignLockDeleted(path: string, czxid: number, by: string, heardZxid: number): void {
    const deletedZxid = this.handDeletedZxid.get(`${path} ${by}`);
    if (deletedZxid !== undefined && heardZxid < deletedZxid) this.forcedTokens.add(lockId(keyOfLockPath(path), czxid));
  }

  released(grant: Grant): void {
    this.active.delete(grant.id);
  }

  /** A forced release deleted the privateLock at `path` with this czxid. */
  forced(path: string, token: number): void {
    this.forcedTokens.add(lockId(keyOfLockPath(path), token));
  }

  /** Some actor holds `key` right now. */
  holds(key: string): boolean {
    for (const grant of this.active.values()) if (grant.key === key) return true;
    return false;
  }

  openWaits(): Wait[] {
    return [...this.waits.values()];
  }

  activeGrants(): number {
    return this.active.size;
  }

  /** After every event: no two usable grants of one document. */
  checkStep(): void {
    const usable = new Map<string, Grant>();
    for (const grant of this.active.values()) {
      if (this.overriddenGrant(grant) || !grant.held.usable()) continue;
      const other = usable.get(grant.key);
      if (other !== undefined) {
        this.violate(`mutual exclusion: ${grant.key} usable by grant ${other.id} (engine ${other.engine}, token ${other.held.fencingToken}) and grant ${grant.id} (engine ${grant.engine}, token ${grant.held.fencingToken})`);
      } else usable.set(grant.key, grant);
    }
  }

  /**
   * A holder may still have a write in flight until it releases, lost or not: while its session
   * lives, nobody else is granted the document (unless an operator took it away).
   */
  private checkOccupied(grant: Grant): void {
    // A cohort whose privateLock an operator took away hands over locally until it hears of it: the override's own window.
    if (this.overriddenGrant(grant)) return;
    for (const other of this.active.values()) {
      if (other.key !== grant.key || other.id === grant.id) continue;
      if (this.overriddenGrant(other) || !this.server.sessionAlive(other.sessionId)) continue;
      this.violate(
        `exclusion: ${grant.key} granted to engine ${grant.engine} (grant ${grant.id}, token ${grant.held.fencingToken}) while grant ${other.id} ` +
          `(engine ${other.engine}, token ${other.held.fencingToken}, ${other.held.isLost ? 'lost' : 'not lost'}) of a live session is not released`,
      );
    }
  }

  /**
   * A foreground entry of another session, queued before this background request began, is never
   * passed by a grant through ZooKeeper (the fast path reads the queue in the same round trip; a
   * queued request ranks behind it), and by local hand-overs at most `passBound` times.
   *
   * What the engine could know decides which: an entry older than the granted `privateLock` (the
   * fencing token) was there when ZooKeeper granted it, and one the session's latest read of the
   * queue showed was known. An entry that is neither queued behind a holder the engine had not yet
   * heard of: this process had the lock before the entry existed, and giving it to a request that
   * arrived since (its first requester gave up while the create's answer was on its way) is a pass
   * of a lock already held, which the engine can learn of only from a watch — bounded like a local
   * hand-over.
   */
  private checkPassing(grant: Grant, wait: Wait): void {
    const token = grant.held.fencingToken;
    const readAt = this.server.childrenReadZxid(grant.sessionId, grant.key);
    for (const entry of this.server.queue(grant.key)) {
      if (!entry.name.startsWith('A-') || entry.owner === grant.sessionId || entry.czxid > wait.startZxid) continue;
      const known = token <= 0 || entry.czxid < token || entry.czxid <= readAt;
      if (!grant.held.handedOverLocally && known) {
        this.violate(`priority: ${grant.key} granted through ZooKeeper to a background request on engine ${grant.engine} ahead of foreground entry ${entry.name} queued before it`);
        continue;
      }
      const id = `${grant.key}/${entry.name}@${entry.czxid}`;
      const passes = (this.passes.get(id) ?? 0) + 1;
      this.passes.set(id, passes);
      if (passes > this.passBound) this.violate(`priority: ${grant.key} passed on locally to a background request on engine ${grant.engine} ahead of foreground entry ${entry.name} (${passes} times)`);
    }
  }

  /**
   * A grant not marked lost stands on its privateLock: the node with its fencing token exists and
   * its session lives — unless an operator took it away (the holder learns it a round trip later).
   * A session that expired while its link was down had its locks marked lost at the safety margin
   * first, or when the engine learned of the expiry.
   */
  private checkBacked(grant: Grant): void {
    if (grant.held.isLost || this.overriddenGrant(grant) || this.server.privateLock === undefined) return;
    const node = this.server.privateLock(grant.key);
    if (node === null || node.czxid !== grant.held.fencingToken || !this.server.sessionAlive(node.owner)) {
      this.violate(
        `unbacked grant: ${grant.key} granted on engine ${grant.engine} (token ${grant.held.fencingToken}${grant.held.handedOverLocally ? ', local' : ''}) ` +
          `while its privateLock is ${node === null ? 'gone' : `czxid ${node.czxid} of session ${node.owner}${this.server.sessionAlive(node.owner) ? '' : ' (dead)'}`}`,
      );
    }
  }

  /**
   * First come, first served within a rank in one process: a single request is not served while
   * a single request of the same engine and document, of its rank or better, that arrived earlier
   * still waits (not timed out, not cancelled).
   */
  private checkLocalOrder(grant: Grant, wait: Wait | undefined, waiting: readonly Wait[]): void {
    if (wait === undefined || wait.bulk) return;
    const now = this.now();
    const rank = rankOfPriority(grant.held.priority);
    const earlier = waiting.find(
      (other) =>
        other.id !== wait.id &&
        other.engine === grant.engine &&
        other.key === grant.key &&
        !other.bulk &&
        other.cancelledAt === null &&
        other.startedAt + other.timeoutMs > now &&
        other.startedAt < wait.startedAt &&
        rankOfPriority(other.priority) === rank,
    );
    if (earlier !== undefined) this.violate(`order: ${grant.key} on engine ${grant.engine} served wait ${wait.id} before wait ${earlier.id} of its rank that arrived earlier and still waits`);
  }

  /**
   * First come, first served within a rank across processes, through ZooKeeper: a grant through
   * ZooKeeper (not a local hand-over) never goes ahead of another session's entry of the same rank
   * that the session had read, unless one of its own entries of that rank or better was queued
   * before that entry and stayed until the grant. (Better-ranked entries: `checkPassing`.)
   */
  private checkSameRankOrder(grant: Grant): void {
    if (grant.held.handedOverLocally || this.overriddenGrant(grant)) return;
    const token = grant.held.fencingToken;
    const rank = rankOfPriority(grant.held.priority);
    const readAt = this.server.childrenReadZxid(grant.sessionId, grant.key);
    const own = this.server.entryHistory(grant.sessionId, grant.key);
    for (const entry of this.server.queue(grant.key)) {
      if (entry.owner === grant.sessionId || rankOfEntry(entry.name) !== rank || entry.czxid > readAt || entry.czxid > token) continue;
      const before = own.some((mine) => rankOfEntry(mine.name) <= rank && mine.czxid < entry.czxid && (mine.removedZxid === null || mine.removedZxid >= token || this.entriesDeletedByHand.has(mine.czxid)));
      if (!before) this.violate(`order: ${grant.key} granted through ZooKeeper on engine ${grant.engine} (token ${token}) ahead of ${entry.name} of its rank, queued before it and read`);
    }
  }

  /**
   * The hand-over bound, exactly: under one ZooKeeper grant an engine passes a document on
   * locally at most \`maxCount\` times ahead of another session's entry of the passed request's
   * rank or better, and never \`maxMs\` or more after the later of that entry's creation and the
   * grant. The engine's window starts at the grant or at the send of a watched read that showed
   * nobody else — a read sent after the entry was created shows it — so no slack is needed.
   */
  private checkHandOverBound(grant: Grant): void {
    const zkKey = `${grant.engine} ${grant.held.fencingToken}`;
    // Every grant through ZooKeeper starts a window, also one that keeps the same privateLock (recovery found it ours and first).
    if (!grant.held.handedOverLocally || !this.zkGrantAt.has(zkKey)) this.zkGrantAt.set(zkKey, grant.at);
    if (this.limits === null || !grant.held.handedOverLocally || this.overriddenGrant(grant)) return;
    const rank = rankOfPriority(grant.held.priority);
    const grantedAt = this.zkGrantAt.get(zkKey) ?? grant.at;
    for (const entry of this.server.queue(grant.key)) {
      if (entry.owner === grant.sessionId || rankOfEntry(entry.name) > rank) continue;
      const id = `${grant.key}/${entry.name}@${entry.czxid} ${zkKey}@${grantedAt}`;
      const passes = (this.localPasses.get(id) ?? 0) + 1;
      this.localPasses.set(id, passes);
      if (passes > this.limits.maxCount) this.violate(`hand-over bound: ${grant.key} passed on locally on engine ${grant.engine} ${passes} times ahead of ${entry.name} (bound ${this.limits.maxCount})`);
      const since = grant.at - Math.max(entry.ctime, grantedAt);
      if (since >= this.limits.maxMs) this.violate(`hand-over bound: ${grant.key} passed on locally on engine ${grant.engine} ${since} ms after ${entry.name} queued and the grant (bound ${this.limits.maxMs} ms)`);
    }
  }

  /** At the end: every wait settled. */
  checkSettled(): void {
    for (const wait of this.waits.values()) this.violate(`liveness: ${wait.key} on engine ${wait.engine} (started t=${wait.startedAt}) never settled`);
  }
}
