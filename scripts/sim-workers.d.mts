/** Types of scripts/sim-workers.mjs, for its tests. */
export interface SeedRange {
  readonly first: number;
  readonly runs: number;
}

export interface WorkerReport {
  readonly runs: number;
  readonly events: number;
  readonly cpuSeconds: number;
  readonly failing: readonly { readonly seed: number; readonly text: string }[];
  readonly coverage: readonly { readonly move: string; readonly seeds: number }[] | null;
}

export function splitSeeds(first: number, runs: number, workers: number): SeedRange[];
export function mergeReports(reports: readonly WorkerReport[]): {
  runs: number;
  events: number;
  cpuSeconds: number;
  failing: { seed: number; text: string }[];
  coverage: { move: string; seeds: number }[] | null;
};
export function coverageLines(coverage: readonly { readonly move: string; readonly seeds: number }[], runs: number): string[];
export function progressOf(line: string): { done: number; failing: number } | null;
