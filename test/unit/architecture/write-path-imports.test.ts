import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../../src');

/** Every TypeScript file under `dir`, recursively. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative module specifiers of static imports, re-exports and dynamic imports. */
function relativeSpecifiers(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.[^'"]+)['"]/gm)) found.push(match[1]!);
  return found;
}

/** `file`'s imports that resolve into `folder` (both relative to src/). */
function importsInto(file: string, folder: string): string[] {
  const target = join(SRC, folder) + sep;
  return relativeSpecifiers(readFileSync(file, 'utf8'))
    .filter((specifier) => resolve(dirname(file), specifier).startsWith(target))
    .map((specifier) => `${relative(SRC, file)} imports ${specifier}`);
}

describe('the write path and the HTTP edge', () => {
  it('src/write imports nothing from src/http: it returns outcomes, the edge renders them', () => {
    const files = sourceFiles(join(SRC, 'write'));
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap((file) => importsInto(file, 'http'))).toEqual([]);
  });

  it('the walk sees an import into src/http where there is one', () => {
    // The edge does import the write path's outcome: the check is not vacuous.
    expect(importsInto(join(SRC, 'http', 'write-edge.ts'), 'write')).not.toEqual([]);
    expect(importsInto(join(SRC, 'server', 'proxy-runtime.ts'), 'http')).not.toEqual([]);
  });
});

describe('legacy configuration key names', () => {
  it('the lock wait timeouts are read from their legacy names only in config-keys.ts', () => {
    const legacy = /zookeeper\.(?:foregound|backgound|foreground|background)\.task\.timeout/;
    const naming = sourceFiles(SRC).filter((file) => legacy.test(readFileSync(file, 'utf8')));
    expect(naming.map((file) => relative(SRC, file))).toEqual([join('config', 'config-keys.ts')]);
  });
});
