import { CohortCore } from '../../src/lock/zookeeper/cohort-core.js';
import { LocalCohort } from '../../src/lock/zookeeper/cohort/local-cohort.js';
import { type CohortEvent, type CohortState, TRANSITIONS } from '../../src/lock/zookeeper/cohort-states.js';

type Apply = (this: { state: CohortState }, event: CohortEvent) => void;
type Probe = (this: unknown) => boolean;

/** The rare paths counted beside the transition table's moves. */
export const RARE_PATHS = ['placeNeedsFreshQueue'] as const;

/**
 * Which of the document lock's moves (its transition table, cohort-states.ts) and rare paths
 * the seeds reach: `start` patches the production prototypes to count them (the moves themselves
 * run unchanged), `seedDone` closes a seed, `counts` gives every move with how many seeds made it.
 */
export class TransitionCoverage {
  private readonly seeds = new Map<string, number>();
  private readonly inSeed = new Set<string>();
  private restore: (() => void) | null = null;

  start(): void {
    const cohort = CohortCore.prototype as unknown as { apply: Apply };
    const loop = LocalCohort.prototype as unknown as { placeNeedsFreshQueue: Probe };
    const apply = cohort.apply;
    const probe = loop.placeNeedsFreshQueue;
    const inSeed = this.inSeed;
    cohort.apply = function (this: { state: CohortState }, event: CohortEvent): void {
      inSeed.add(`${this.state} -${event}->`);
      apply.call(this, event);
    };
    loop.placeNeedsFreshQueue = function (this: unknown): boolean {
      const needed = probe.call(this);
      if (needed) inSeed.add('placeNeedsFreshQueue');
      return needed;
    };
    this.restore = () => {
      cohort.apply = apply;
      loop.placeNeedsFreshQueue = probe;
    };
  }

  seedDone(): void {
    for (const move of this.inSeed) this.seeds.set(move, (this.seeds.get(move) ?? 0) + 1);
    this.inSeed.clear();
  }

  /** Forgets what the current seed made (a failing seed run again for its trace). */
  discard(): void {
    this.inSeed.clear();
  }

  stop(): void {
    this.restore?.();
    this.restore = null;
  }

  /** Every move of the table (and rare path), in the table's order, with how many seeds made it (scripts/sim-workers.mjs prints them). */
  counts(): { readonly move: string; readonly seeds: number }[] {
    const moves = TRANSITIONS.map((move) => ({ move: `${move.from} -${move.event}-> ${move.to}`, seeds: this.seeds.get(`${move.from} -${move.event}->`) ?? 0 }));
    return [...moves, ...RARE_PATHS.map((path) => ({ move: path, seeds: this.seeds.get(path) ?? 0 }))];
  }
}
