import type { WatchEventType, NodeMode } from '../../src/zookeeper-client/zk-client.js';
import type { ChildrenRead, LockZk, NodeRead, NodeStat, TxnOutcome, ZkOp } from '../../src/lock/zookeeper/session/lock-zk.js';
import type { RequestGate } from '../../src/lock/zookeeper/session/request-gate.js';
import type { SimClient } from './sim-client.js';

/**
 * The engine's port on a simulated handle, through the session's request gate as production puts
 * the addon's (`GatedZk`: a request weighs 1, a transaction its operations), so that the gate is
 * in the simulation's reach. What the gate promises is checked from outside, at every request it
 * hands on: never more operations outstanding than its bound (a larger transaction counts as the
 * bound), and requests handed on in the order they were issued — the engine relies on ZooKeeper
 * answering a session's requests in that order.
 */
export class GatedSimZk implements LockZk {
  private readonly zk: SimClient;
  private readonly gate: RequestGate;
  private readonly violate: (what: string) => void;
  private outstanding = 0;
  private issued = 0;
  private handedOn = 0;
  /** When a request last waited in the gate (clock time; −∞: none ever did). */
  private lastWaitAt = Number.NEGATIVE_INFINITY;

  constructor(zk: SimClient, gate: RequestGate, violate: (what: string) => void) {
    this.zk = zk;
    this.gate = gate;
    this.violate = violate;
  }

  get sessionId(): string {
    return this.zk.sessionId;
  }

  /**
   * The latest time (`now` while one does) a request waited in the gate: the checks' time bounds
   * assume a session's requests are pipelined, and count from when none waits behind others.
   */
  waitedAt(now: number): number {
    return this.issued > this.handedOn ? now : this.lastWaitAt;
  }

  create(path: string, data: string, mode: NodeMode): Promise<{ readonly path: string; readonly stat: NodeStat }> {
    return this.through(1, () => this.zk.create(path, data, mode));
  }

  children(path: string): Promise<ChildrenRead> {
    return this.through(1, () => this.zk.children(path));
  }

  childrenWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<readonly string[]> {
    return this.through(1, () => this.zk.childrenWatched(path, onEvent));
  }

  get(path: string): Promise<NodeRead> {
    return this.through(1, () => this.zk.get(path));
  }

  getWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<NodeRead> {
    return this.through(1, () => this.zk.getWatched(path, onEvent));
  }

  existsWatched(path: string, onEvent: (type: WatchEventType) => void): Promise<NodeStat | null> {
    return this.through(1, () => this.zk.existsWatched(path, onEvent));
  }

  delete(path: string, version: number): Promise<void> {
    return this.through(1, () => this.zk.delete(path, version));
  }

  ephemerals(prefix: string): Promise<readonly string[]> {
    return this.through(1, () => this.zk.ephemerals(prefix));
  }

  multi(ops: readonly ZkOp[]): Promise<TxnOutcome> {
    return this.through(ops.length, () => this.zk.multi(ops));
  }

  private through<T>(weight: number, issue: () => Promise<T>): Promise<T> {
    const cost = Math.min(Math.max(1, weight), this.gate.capacity);
    const number = ++this.issued;
    const heardAtIssue = this.zk.heard;
    let waited = false;
    const through = this.gate.run(weight, () => {
      if (waited) this.lastWaitAt = Date.now();
      if (number !== this.handedOn + 1) this.violate(`request gate: request ${number} of session ${this.zk.sessionId} handed on after request ${this.handedOn}`);
      this.handedOn = Math.max(this.handedOn, number);
      this.outstanding += cost;
      if (this.outstanding > this.gate.capacity) {
        this.violate(`request gate: ${this.outstanding} operations outstanding on session ${this.zk.sessionId}, bound ${this.gate.capacity}`);
      }
      let answer: Promise<T>;
      this.zk.heardAtIssue = heardAtIssue;
      try {
        answer = issue();
      } catch (error) {
        answer = Promise.reject(error);
      } finally {
        this.zk.heardAtIssue = null;
      }
      return answer.finally(() => (this.outstanding -= cost));
    });
    // Handed on at once, or left waiting behind others (then handed on from an answer's turn).
    waited = this.handedOn < number;
    return through;
  }
}
