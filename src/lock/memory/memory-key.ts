import type { LockAcquisition, LockHome } from '../lock-acquisition.js';
import type { LockInspection, LockKey } from '../lock-engine.js';
import type { LockEvents } from '../lock-events.js';
import { LocalQueue } from '../local-queue.js';

/**
 * One key of the memory engine: its holder and its queue. A release passes the lock to the next
 * waiter directly with the same fencing token; `handOver: false` and a forced release give the
 * next holder a new one.
 */
export class MemoryKey implements LockHome {
  readonly key: LockKey;
  holder: LockAcquisition | null = null;
  private readonly queue = new LocalQueue<LockAcquisition>();
  private readonly tokens: { last: number };
  private readonly events: LockEvents;
  private readonly forget: () => void;
  private token = 0;

  constructor(key: LockKey, tokens: { last: number }, events: LockEvents, forget: () => void) {
    this.key = { index: key.index, id: key.id };
    this.tokens = tokens;
    this.events = events;
    this.forget = forget;
  }

  arrive(member: LockAcquisition): void {
    member.home = this;
    member.queuePositionOnArrival = this.queue.ahead(member.priority) + (this.holder === null ? 0 : 1);
    if (this.holder === null && member.queuePositionOnArrival === 0) {
      this.grant(member, false);
      return;
    }
    this.queue.push(member);
  }

  withdraw(member: LockAcquisition): undefined {
    this.queue.remove(member);
    this.forgetIfIdle();
    return undefined;
  }

  async release(member: LockAcquisition, handOver: boolean): Promise<void> {
    this.releaseNow(member, handOver);
  }

  releaseInBackground(member: LockAcquisition): void {
    this.releaseNow(member, true);
  }

  private releaseNow(member: LockAcquisition, handOver: boolean): void {
    if (this.holder !== member) return;
    this.holder = null;
    this.serveNext(handOver && !member.isLost);
  }

  linkUp(): boolean {
    return true;
  }

  async whenLinkUp(): Promise<void> {}

  forceRelease(): boolean {
    const holder = this.holder;
    if (holder === null) return false;
    if (holder.markLost('forced release by an operator')) this.events.lost({ key: this.key, reason: 'forced release by an operator' });
    this.holder = null;
    this.serveNext(false);
    return true;
  }

  async close(error: Error): Promise<void> {
    for (const member of this.queue.drain()) member.group.fail(member, error);
    await this.holder?.release();
  }

  describe(): LockInspection {
    const holder = this.holder;
    const request = holder?.group.request;
    return {
      key: this.key,
      holder:
        holder === null || request === undefined
          ? null
          : { owner: request.owner, priority: holder.priority, since: holder.acquiredAt, message: request.message ?? '' },
      queue: this.queue.values().map((member, i) => ({
        priority: member.priority,
        owner: member.group.request.owner,
        entry: `${member.priority === 'foreground' ? 'A' : 'B'}-${String(i).padStart(10, '0')}`,
      })),
    };
  }

  private serveNext(handOver: boolean): void {
    const next = this.queue.shift();
    if (next === undefined) {
      this.forgetIfIdle();
      return;
    }
    this.grant(next, handOver);
  }

  private grant(member: LockAcquisition, handOver: boolean): void {
    if (!handOver) this.token = ++this.tokens.last;
    this.holder = member;
    member.grant({ queuePosition: member.queuePositionOnArrival, handedOverLocally: handOver, fencingToken: this.token }, Date.now());
  }

  private forgetIfIdle(): void {
    if (this.holder === null && this.queue.size === 0) this.forget();
  }
}
