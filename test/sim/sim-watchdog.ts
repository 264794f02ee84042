import { type Ledger, lockId } from './sim-ledger.js';
import { type EngineSlot, SESSION_TIMEOUT_MS, sessionOf } from './sim-world.js';

/**
 * Bounds of the invariants over time (docs/simulation.md, "What is checked", says why each is
 * what it is).
 */
export const WATCHDOG = {
  /**
   * A wait whose document is free of holders and other waiters, every link up, is granted within
   * this: on a fast network (hops of 0–3 ms) `fastProgressMs`, on a slow one (hops up to 120 ms)
   * `progressMs` — and, after a link came back, only once the acquisitions that lost a reply
   * have looked at what they have (pauses of 100, 200, 400, 800 ms after unknown outcomes in a row).
   */
  progressMs: 1_000,
  fastProgressMs: 150,
  afterReconnectMs: 1_600,
  /** An engine that neither waits for nor holds a document, its link up, has deleted its queue entries there within this. */
  leftoverMs: 500,
  /**
   * …on a slow network (slow hops, stalls, steering), where a release refused by the epoch or the
   * owner check reads its nodes and is sent again: three round trips of up to some 250 ms each.
   */
  slowLeftoverMs: 1_000,
  /** A single acquisition's lock is marked lost within this after its privateLock was deleted by hand, its link up meanwhile. */
  handDeletedMs: 300,
  /**
   * A transaction refused as a whole is tried again after a pause that grows with each refusal in
   * a row, up to 2 s (release-batcher.ts), and an acquisition that met one looks at what it has
   * after up to 5 s (recovery.ts): the time bounds count from this long after an engine's latest
   * refusal.
   */
  afterRefusalMs: 5_000,
  /** ZooKeeper requests an engine may make per acquisition it was asked for (a bulk's key counts as one). */
  requestsPerAcquisition: 25,
  /** …and per session it opened and per cut of its link (reconnect, sweep, re-armed watches, verifications). */
  requestsPerSession: 40,
  /** …and to start with. */
  requestsBase: 60,
} as const;

/** The safety margin: held locks are marked lost this long after the client noticed the cut. */
const MARGIN_MS = SESSION_TIMEOUT_MS / 4;

/** What the watchdog reads of the run besides the ledger: how many acquisitions each engine was asked for, and what the server holds. */
export interface WatchdogWorld {
  readonly slots: readonly EngineSlot[];
  /** Acquisitions (a bulk's keys one each) and forced releases asked of engine `index` so far. */
  asked(index: number): number;
  /** Cuts of engine `index`'s links so far. */
  cuts(index: number): number;
  /** Queue entries and privateLock under a document owned by a session: names. */
  nodesOf(sessionId: string, key: string): readonly string[];
  readonly keys: readonly string[];
  readonly lingerMs: number;
  /** Run time (ms). */
  now(): number;
  /** Every hop of the run's network takes 0–3 ms. */
  readonly fastNetwork: boolean;
  /** The virtual clock's time at the run's start (the clients' times are the clock's). */
  readonly startMs: number;
  /** The latest run time a request of any engine waited in a narrow request gate (−∞: never). */
  gateWaitedAt(): number;
}

/**
 * Invariants over time, checked after every event: progress on a free document, nothing left
 * behind after a withdrawal, a request budget per acquisition, the safety margin, a session's end
 * and a hand-deleted privateLock each seen in time.
 */
export class Watchdog {
  private readonly freeSince = new Map<number, number>();
  private readonly idleSince = new Map<string, number>();
  /** `engine key` of each engine's documents, made once: the leftover check looks them up after every event. */
  private readonly leftoverIds: string[][] = [];
  private readonly reported = new Set<string>();
  private upSince: number;
  /** When every link was last back up after one was down (−∞: never down). */
  private backSince = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ledger: Ledger,
    private readonly world: WatchdogWorld,
  ) {
    this.upSince = world.now();
  }

  check(): void {
    const now = this.world.now();
    const allUp = this.world.slots.every((slot) => slot.clients.at(-1)?.connected === true);
    if (!allUp) this.upSince = Number.POSITIVE_INFINITY;
    else if (this.upSince === Number.POSITIVE_INFINITY) {
      this.upSince = now;
      this.backSince = now;
    }
    let refused = 0;
    for (const slot of this.world.slots) for (const client of slot.clients) refused = Math.max(refused, client.lastRefusedAt ?? 0);
    // The time bounds start once refused transactions can no longer be waiting for their pause.
    if (refused > 0) this.upSince = Math.max(this.upSince, refused - this.world.startMs + WATCHDOG.afterRefusalMs);
    // The time bounds are a pipelined link's: they count from when no request waits in a narrow gate.
    this.upSince = Math.max(this.upSince, this.world.gateWaitedAt());
    this.checkProgress(now, allUp);
    this.checkLeftovers(now);
    this.checkBudget();
    this.checkLostInTime(now);
  }

  private once(id: string, what: string): void {
    if (this.reported.has(id)) return;
    this.reported.add(id);
    this.ledger.violate(what);
  }

  /**
   * Progress: a wait does not stay open past the bound while its document has no holder and no
   * other waiter (of any engine) and every engine's link is up.
   */
  private checkProgress(now: number, allUp: boolean): void {
    const waits = this.ledger.openWaits();
    const grants = this.ledger.activeList();
    const open = new Set<number>();
    for (const wait of waits) {
      // A bulk's key that failed is seen only when the whole bulk answers: its keys are not timed one by one.
      if (wait.bulk) continue;
      open.add(wait.id);
      const free = allUp && !grants.some((grant) => grant.key === wait.key) && !waits.some((other) => other.id !== wait.id && other.key === wait.key);
      if (!free) {
        this.freeSince.delete(wait.id);
        continue;
      }
      const since = Math.max(this.freeSince.get(wait.id) ?? now, this.upSince, this.backSince + WATCHDOG.afterReconnectMs);
      this.freeSince.set(wait.id, this.freeSince.get(wait.id) ?? now);
      // A waiter whose queue entry an operator deleted (by hand, or with a forced release of the lock
      // it held a moment) is unseen by the holder, which may linger on after its release; the waiter
      // finds out when the node it watches goes.
      const slot = this.world.slots[wait.engine];
      const unseen = slot !== undefined && this.ledger.entryHandDeleted(wait.key, sessionOf(slot)) ? this.world.lingerMs : 0;
      if (now - since > unseen + (this.world.fastNetwork ? WATCHDOG.fastProgressMs : WATCHDOG.progressMs)) {
        this.once(`progress ${wait.id}`, `progress: ${wait.key} on engine ${wait.engine} (wait ${wait.id}) not granted after ${now - since} ms with the document free and every link up`);
      }
    }
    for (const id of this.freeSince.keys()) if (!open.has(id)) this.freeSince.delete(id);
  }

  /**
   * Nothing left behind after every withdrawal: an engine that neither waits for nor holds a
   * document (its link up) keeps no queue entry there past the bound, nor its privateLock past
   * the linger time and the bound.
   */
  private checkLeftovers(now: number): void {
    // Engines and documents with a wait or a grant, as `engine key`: one pass, not one per engine and document.
    const used = new Set<string>();
    for (const wait of this.ledger.openWaits()) used.add(`${wait.engine} ${wait.key}`);
    for (const grant of this.ledger.activeList()) used.add(`${grant.engine} ${grant.key}`);
    for (const slot of this.world.slots) {
      const client = slot.clients.at(-1);
      const ids = (this.leftoverIds[slot.index] ??= this.world.keys.map((key) => `${slot.index} ${key}`));
      for (const [at, key] of this.world.keys.entries()) {
        const id = ids[at] ?? `${slot.index} ${key}`;
        const busy = client?.connected !== true || used.has(id);
        if (busy || client === undefined) {
          this.idleSince.delete(id);
          continue;
        }
        let idleFrom = this.idleSince.get(id);
        if (idleFrom === undefined) this.idleSince.set(id, (idleFrom = now));
        const since = Math.max(idleFrom, this.upSince);
        const idleMs = now - since;
        const leftoverMs = this.world.fastNetwork ? WATCHDOG.leftoverMs : WATCHDOG.slowLeftoverMs;
        if (idleMs <= leftoverMs) continue;
        for (const name of this.world.nodesOf(client.sessionId, key)) {
          const bound = name === 'privateLock' ? this.world.lingerMs + leftoverMs : leftoverMs;
          if (idleMs > bound) this.once(`leftover ${id} ${name} ${idleFrom}`, `leftover: ${key}/${name} of engine ${slot.index} (session ${client.sessionId}) ${idleMs} ms after it last waited for or held the document`);
        }
      }
    }
  }

  /** A busy loop fails: ZooKeeper requests per engine stay within a budget per acquisition, session and cut. */
  private checkBudget(): void {
    for (const slot of this.world.slots) {
      const requests = slot.clients.reduce((sum, client) => sum + client.requests, 0);
      const allowed = WATCHDOG.requestsBase + WATCHDOG.requestsPerAcquisition * this.world.asked(slot.index) + WATCHDOG.requestsPerSession * (slot.clients.length + this.world.cuts(slot.index));
      if (requests > allowed) this.once(`budget ${slot.index}`, `request budget: engine ${slot.index} made ${requests} ZooKeeper requests, more than ${allowed} for ${this.world.asked(slot.index)} acquisitions`);
    }
  }

  /**
   * A held lock is marked lost in time: at the safety margin after its client noticed the cut;
   * the moment the engine learns its session ended; within a bound after an operator deleted a
   * single acquisition's privateLock by hand while its link was up.
   */
  private checkLostInTime(now: number): void {
    for (const grant of this.ledger.activeList()) {
      if (grant.held.isLost || grant.engine >= this.world.slots.length) continue;
      const slot = this.world.slots[grant.engine];
      const client = slot?.clients.find((candidate) => candidate.sessionId === grant.sessionId);
      if (client === undefined) continue;
      const overridden = this.ledger.overridden(grant.key, grant.held.fencingToken);
      if (client.dead && !overridden) this.once(`ended ${grant.id}`, `session end unseen: ${grant.key} on engine ${grant.engine} (grant ${grant.id}) not lost after its session ${grant.sessionId} ended`);
      const noticedMs = client.noticedAt === null ? null : client.noticedAt - this.world.startMs;
      if (noticedMs !== null && now - noticedMs > MARGIN_MS && !overridden) {
        this.once(`margin ${grant.id}`, `margin: ${grant.key} on engine ${grant.engine} (grant ${grant.id}) not lost ${now - noticedMs} ms after its link was seen down (margin ${MARGIN_MS} ms)`);
      }
      const deletedAt = this.ledger.handDeleted.get(lockId(grant.key, grant.held.fencingToken));
      // A lock handed on after the deletion (from a bulk's key, which learns of it only at its
      // release) is watched from the hand-over: its clock starts at the grant.
      if (grant.single && deletedAt !== undefined && client.connected && now - Math.max(deletedAt, this.upSince, grant.at) > WATCHDOG.handDeletedMs) {
        this.once(`hand ${grant.id}`, `hand deletion unseen: ${grant.key} on engine ${grant.engine} (grant ${grant.id}) not lost ${now - deletedAt} ms after its privateLock was deleted by hand`);
      }
    }
  }

}
