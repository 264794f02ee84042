/**
 * The simulation's only source of chance: a small seeded generator (mulberry32), so one seed
 * gives one run. Forks give independent streams (network, faults, actors) that stay the same
 * when another stream draws more or fewer numbers.
 */
export class SimRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A uniform 32-bit unsigned integer. */
  uint32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** In [0, 1). */
  float(): number {
    return this.uint32() / 4_294_967_296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.float() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(0, items.length - 1)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  fork(): SimRandom {
    return new SimRandom(this.uint32() ^ 0x9e3779b9);
  }
}
