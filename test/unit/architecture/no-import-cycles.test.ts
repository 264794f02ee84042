import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, localImports, sourceFiles } from './source-imports.js';

/** Every cycle's files, found by a depth-first walk that reports each back edge once. */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push(path.slice(path.indexOf(next)));
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

describe('src/ module structure', () => {
  const graph = new Map(sourceFiles(SRC).map((file) => [file, localImports(file)] as const));

  it('has no import cycles', () => {
    const cycles = importCycles(graph).map((cycle) => cycle.map((file) => relative(SRC, file)).join(' -> '));
    expect(cycles).toEqual([]);
  });

  it('the walk sees a cycle when there is one', () => {
    const a = join(SRC, 'a.ts');
    const b = join(SRC, 'b.ts');
    expect(importCycles(new Map([[a, [b]], [b, [a]]]))).toEqual([[a, b]]);
  });
});
