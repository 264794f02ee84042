import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFolders } from '../architecture/source-imports.js';

const REPO = resolve(import.meta.dirname, '../../..');

/** The fenced block under CONTRIBUTING's "## Layout" heading. */
function layoutBlock(markdown: string): string {
  const section = markdown.split(/^## Layout$/m)[1] ?? '';
  return /^```\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? '';
}

/**
 * The folders the map names, as full paths: a line `<indent>name/ description` is a folder inside
 * the nearest line above it with less indent. Continuation lines (no `name/` first) name nothing.
 */
function mappedFolders(block: string): string[] {
  const open: { indent: number; path: string }[] = [];
  const folders: string[] = [];
  for (const line of block.split('\n')) {
    const match = /^( *)([\w.-]+)\/(?:\s|$)/.exec(line);
    if (match === null) continue;
    const indent = match[1]?.length ?? 0;
    while (open.length > 0 && (open.at(-1)?.indent ?? 0) >= indent) open.pop();
    const path = [...open.map((folder) => folder.path), match[2] ?? ''].join('/');
    open.push({ indent, path: match[2] ?? '' });
    folders.push(path);
  }
  return folders;
}

/** The src/ folders (relative to src/) the map names. */
function mappedSourceFolders(block: string): string[] {
  return mappedFolders(block)
    .filter((path) => path.startsWith('src/'))
    .map((path) => path.slice('src/'.length));
}

describe("CONTRIBUTING's map of the layout", () => {
  const mapped = mappedSourceFolders(layoutBlock(readFileSync(resolve(REPO, 'CONTRIBUTING.md'), 'utf8')));

  it('lists every folder of src/', () => {
    expect(sourceFolders().filter((folder) => !mapped.includes(folder))).toEqual([]);
  });

  it('lists no folder src/ does not have', () => {
    const present = new Set(sourceFolders());
    expect(mapped.filter((folder) => !present.has(folder))).toEqual([]);
  });

  it('the reading nests folders by indent and skips continuation lines', () => {
    const block = ['src/', '  lock/     the contract,', '            more words', '    zookeeper/  the engine', '      queue/  the loop', '  http/     the edge', 'bench/    benchmarks'].join('\n');
    expect(mappedSourceFolders(block)).toEqual(['lock', 'lock/zookeeper', 'lock/zookeeper/queue', 'http']);
  });
});
