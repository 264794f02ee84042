import type { SimRandom } from './sim-random.js';
import type { SimZooKeeper } from './sim-zookeeper.js';
import type { VirtualClock } from './virtual-clock.js';
import { ACTIVE_MS, type EngineSlot, SESSION_TIMEOUT_MS } from './sim-world.js';

/** Cut links (noticed or not, back within the session or after it expired) drawn by the seed. Returns when the last one ends. */
export function planFaults(slots: readonly EngineSlot[], random: SimRandom, clock: VirtualClock, log: (line: string) => void, steered = false): number {
  let lastEnd = 0;
  const count = random.int(0, 4);
  const T = SESSION_TIMEOUT_MS;
  for (let i = 0; i < count; i++) {
    const at = random.int(0, ACTIVE_MS);
    const slot = random.pick(slots);
    const kind = random.pick(['blip', 'margin', 'expiry'] as const);
    const noticeMs = kind === 'blip' ? random.int(0, 50) : random.int(0, Math.floor((2 * T) / 3));
    const backMs =
      kind === 'blip' ? noticeMs + random.int(1, 300) : kind === 'margin' ? random.int(noticeMs + T / 4 + 1, T - 1) : T + random.int(T / 10 + 1, T);
    const expireMs = T + random.int(0, T / 10);
    lastEnd = Math.max(lastEnd, at + backMs);
    clock.schedule(() => {
      // Most faults strike an engine in the middle of holding a lock.
      const holding = slots.filter((candidate) => candidate.engine.activity().held > 0);
      let target = holding.length > 0 && random.chance(0.8) ? random.pick(holding) : slot;
      // Steered runs end sessions under engines with requests in flight: the session ends in the middle of an acquisition.
      const waiting = slots.filter((candidate) => candidate.engine.activity().waiting > 0);
      if (steered && kind === 'expiry' && waiting.length > 0) target = waiting[at % waiting.length] ?? target;
      const client = target.clients.at(-1);
      if (client === undefined) return;
      log(`fault ${kind} on e${target.index}`);
      client.silence(noticeMs, backMs, expireMs, 0.5);
    }, at);
  }
  return lastEnd;
}

/** ZooKeeper's container manager, at moments drawn by the seed. */
export function planReaper(server: SimZooKeeper, random: SimRandom, clock: VirtualClock, log: (line: string) => void, untilMs: number): void {
  const meanMs = random.pick([20, 100, 1_000]);
  let at = 0;
  while (at < untilMs) {
    at += random.int(1, 2 * meanMs);
    clock.schedule(() => {
      const reaped = server.reapContainers();
      if (reaped.length > 0) log(`reaper deletes ${reaped.join(' ')}`);
    }, at);
  }
}
