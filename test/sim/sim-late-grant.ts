import type { LockKey } from '../../src/lock/lock-engine.js';
import type { Actors } from './sim-actors.js';
import type { SimRandom } from './sim-random.js';
import type { EngineSlot } from './sim-world.js';

/**
 * A stall on one engine's link: the first hop after it begins goes on time, each later hop until
 * it ends (requests and answers) takes 20–60 ms more — of two requests sent together, the first
 * reaches the server at once and the second late. Drawn from a stream of its own, and only inside
 * a stall.
 */
export class LinkLag {
  private readonly stalls: { readonly client: string; readonly from: number; readonly until: number; onTime: number }[] = [];

  constructor(
    private readonly random: SimRandom,
    private readonly now: () => number,
  ) {}

  /** `client`'s link stalls from its next hop on, for `ms`. */
  stall(client: string, ms: number): void {
    const from = this.now();
    this.stalls.push({ client, from, until: from + ms, onTime: 1 });
  }

  /** The extra delay of a hop of `client` sent now. */
  extra(client: string | undefined): number {
    const now = this.now();
    const stall = this.stalls.find((candidate) => candidate.client === client && candidate.from <= now && now < candidate.until);
    if (stall === undefined) return 0;
    if (stall.onTime > 0) {
      stall.onTime--;
      return 0;
    }
    return this.random.int(20, 60);
  }
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The late grant (docs/simulation.md, the rare path `placeNeedsFreshQueue`), on a document of its
 * own. First a round of contention: engine A holds the document a moment while engine B asks for
 * it, so that B marks it contended (its next request queues at once). Then A asks again, in the
 * foreground with a timeout of 20–50 ms, as its link stalls: its read of the queue reaches the
 * server at once and its `privateLock` create late, possibly answered after the request gave up. B queues
 * a foreground entry meanwhile, and a background request of A arrives before the create's answer
 * — to be served only once a fresh read shows nobody before it.
 */
export function planLateGrant(actors: Actors, slots: readonly EngineSlot[], key: LockKey, random: SimRandom, lag: LinkLag, activeMs: number): void {
  if (slots.length < 2) return;
  const mine = random.pick(slots);
  const other = random.pick(slots.filter((slot) => slot !== mine));
  const run = async (): Promise<void> => {
    const held = actors.single(mine, key, 'foreground', 1_000, random.int(100, 200));
    await pause(random.int(10, 30));
    await Promise.all([held, actors.single(other, key, 'foreground', 1_000, random.int(0, 5))]);
    await pause(random.int(20, 100));
    const queued = random.int(0, 20);
    const background = queued + random.int(3, 30);
    lag.stall(`e${mine.index}`, random.int(40, 100));
    void actors.single(mine, key, 'foreground', random.int(20, 50), 0);
    setTimeout(() => void actors.single(other, key, 'foreground', 1_000, random.int(0, 8)), queued);
    setTimeout(() => void actors.single(mine, key, 'background', 1_000, random.int(0, 8)), background);
  };
  setTimeout(() => void run(), random.int(0, activeMs - 800));
}
