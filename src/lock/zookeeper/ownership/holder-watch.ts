import { toZkError } from '../../../zookeeper-client/zk-errors.js';
import type { Connection } from '../session/connection.js';

/**
 * A data watch on one privateLock of ours (one czxid): learns the moment the node goes — deleted
 * by hand (zkCli), or by anything but our own release — or is found to be another node already.
 * Armed with an exists sent right after the grant and not awaited: no round trip is added to the
 * acquisition. A read lost with the connection (or refused for now) is sent again once the link
 * is back; a session that ended took the node anyway. Our own release, yield or step-back fires it
 * too: the lock's callback ignores what it no longer holds.
 *
 * `gone()` is what the release asks before it deletes privateLock: a node that went is never
 * deleted by path, since the name may already be the next holder's. `unsure()`: no read has
 * answered since the watch was armed — the read may wait behind others (a narrow request gate, a
 * slow link) while the node is deleted by hand — or the watch is reading the node again (it fired
 * "changed": after a reconnect, a node deleted and created again fires that; or its read was
 * lost). Until the read answers, the node may be another holder's: the release waits for the
 * read (`whenSure`), which is on its way already, rather than vouch for a node nobody has seen —
 * up to a bound, then it lists the session's nodes (release-batcher.ts).
 */
export class HolderWatch {
  private readonly connection: Connection;
  private readonly path: string;
  readonly czxid: number;
  private readonly generation: number;
  private readonly onGone: () => void;
  private went = false;
  private reading = true;
  /** The session ended: nothing to read or vouch for any more (the release is moot). */
  private ended = false;
  /** Called once the watch is sure: its read answered, the node went, or the session ended. */
  private waiters: (() => void)[] = [];

  constructor(connection: Connection, path: string, czxid: number, generation: number, onGone: () => void) {
    this.connection = connection;
    this.path = path;
    this.czxid = czxid;
    this.generation = generation;
    this.onGone = onGone;
  }

  /** The node this watch is for went away (or was never the one read). */
  gone(): boolean {
    return this.went;
  }

  /** Reading the node (armed, after an event, after a lost read): it may be another holder's until the read answers. */
  unsure(): boolean {
    return this.reading && !this.went && !this.ended;
  }

  /** Resolves once the watch is sure (`unsure()` false), or its session ended. */
  whenSure(): Promise<void> {
    if (!this.unsure()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  arm(): void {
    const link = this.connection.current();
    if (this.went) return;
    if (link === null) {
      void this.armWhenBack();
      return;
    }
    if (link.generation !== this.generation) return this.sessionEnded();
    // exists, not getData: the czxid is all the watch compares, and the node's data (the holder's
    // description, some 200 bytes) would be sent, copied and dropped with every grant.
    link.zk
      .existsWatched(this.path, (type) => {
        if (type === 'deleted') this.wentAway();
        // Nobody writes a privateLock's data; should anybody, the one-shot watch is left again.
        // 'created' comes only after a read that found no node: gone already, the event says nothing.
        else if (type === 'changed') this.reread();
      })
      .then(
        (stat) => {
          // No node: the watch stays for its creation (ZooKeeper's exists), and is ignored when it fires.
          if (stat === null || stat.czxid !== this.czxid) this.wentAway();
          else this.sure();
        },
        (error: unknown) => {
          // Lost with the connection, or refused for now (throttled): read and watch again.
          if (toZkError(error).sessionGone) return this.sessionEnded();
          this.reading = true;
          void this.armWhenBack();
        },
      );
  }

  private reread(): void {
    this.reading = true;
    this.arm();
  }

  private async armWhenBack(): Promise<void> {
    await this.connection.settle();
    const link = await this.connection.whenConnected();
    if (link === null) this.sessionEnded();
    else this.arm();
  }

  private wentAway(): void {
    if (this.went) return;
    this.went = true;
    this.onGone();
    this.sure();
  }

  private sure(): void {
    this.reading = false;
    this.wakeWaiters();
  }

  /** The session, and the node with it, ended: nothing is left to vouch for, nobody should wait. */
  private sessionEnded(): void {
    this.ended = true;
    this.wakeWaiters();
  }

  private wakeWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
