import { ProxyError } from '../../src/errors/proxy-error.js';
import type { HeldLock, Priority } from '../../src/lock/lock-engine.js';
import { keyString } from '../../src/lock/znode-names.js';

/** One grant an actor holds, from the engine's callback to the actor's release. */
export interface Grant {
  readonly id: number;
  readonly engine: number;
  readonly key: string;
  readonly held: HeldLock;
  readonly at: number;
}

/** One acquisition an actor started, until it settles. */
export interface Wait {
  readonly id: number;
  readonly engine: number;
  readonly key: string;
  readonly priority: Priority;
  readonly startedAt: number;
  readonly timeoutMs: number;
  settledAt: number | null;
  /** The client went away (its cancellation fired): it no longer waits, whatever the engine is still doing. */
  cancelledAt: number | null;
}

/** The reason an actor's cancellation carries: a typed answer of its own. */
export class ClientGone extends Error {
  constructor() {
    super('client gone');
    this.name = 'ClientGone';
  }
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
  /** Fencing tokens of privateLocks an operator took away: their holders no longer count. */
  private readonly forcedTokens = new Set<number>();
  private nextId = 1;
  readonly now: () => number;
  private readonly settleBoundMs: number;

  constructor(now: () => number, settleBoundMs: number) {
    this.now = now;
    this.settleBoundMs = settleBoundMs;
  }

  violate(what: string): void {
    if (this.violations.length < 20) this.violations.push(`t=${this.now()} ${what}`);
  }

  startWait(engine: number, key: string, priority: Priority, timeoutMs: number): Wait {
    const wait: Wait = { id: this.nextId++, engine, key, priority, startedAt: this.now(), timeoutMs, settledAt: null, cancelledAt: null };
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
  }

  granted(engine: number, held: HeldLock, waiting: readonly Wait[]): Grant {
    const key = keyString(held.key);
    const grant: Grant = { id: this.nextId++, engine, key, held, at: this.now() };
    if (held.isLost) this.violate(`lost lock forwarded: ${key} granted on engine ${engine} already lost`);
    const previous = this.lastGrant.get(`${engine} ${key}`);
    if (held.handedOverLocally && previous !== undefined && previous.held.isLost && !this.forcedTokens.has(held.fencingToken)) {
      this.violate(`lost lock handed over: ${key} on engine ${engine} passed on after grant ${previous.id} was lost`);
    }
    // A foreground wait of this engine that arrived first (and still waits: not timed out, not
    // cancelled) never sees a later background one served before it.
    if (held.priority === 'background') {
      const now = this.now();
      const stillWaits = (wait: Wait): boolean => wait.cancelledAt === null && wait.startedAt + wait.timeoutMs > now;
      const mine = waiting.find(
        (wait) => wait.engine === engine && wait.key === key && wait.priority === 'foreground' && wait.startedAt < now - held.waitMs && stillWaits(wait),
      );
      if (mine !== undefined) this.violate(`priority: ${key} on engine ${engine} served a background request before foreground wait ${mine.id}`);
    }
    this.lastGrant.set(`${engine} ${key}`, grant);
    this.active.set(grant.id, grant);
    return grant;
  }

  released(grant: Grant): void {
    this.active.delete(grant.id);
  }

  forced(token: number): void {
    this.forcedTokens.add(token);
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
      if (this.forcedTokens.has(grant.held.fencingToken) || !grant.held.usable()) continue;
      const other = usable.get(grant.key);
      if (other !== undefined) {
        this.violate(`mutual exclusion: ${grant.key} usable by grant ${other.id} (engine ${other.engine}, token ${other.held.fencingToken}) and grant ${grant.id} (engine ${grant.engine}, token ${grant.held.fencingToken})`);
      } else usable.set(grant.key, grant);
    }
  }

  /** At the end: every wait settled. */
  checkSettled(): void {
    for (const wait of this.waits.values()) this.violate(`liveness: ${wait.key} on engine ${wait.engine} (started t=${wait.startedAt}) never settled`);
  }
}
