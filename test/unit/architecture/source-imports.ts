import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

export const SRC = resolve(import.meta.dirname, '../../../src');

/** Every TypeScript file under `dir`, recursively. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The files `file` imports or re-exports by a relative specifier, static, dynamic and type-only
 * alike (read by TypeScript's own pre-processor), as absolute `.ts` paths.
 */
export function localImports(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')));
}

/**
 * The folders of src/ that hold source, relative to src/ with `/` separators, parents included
 * (an empty folder a checkout left behind is not one).
 */
export function sourceFolders(): string[] {
  const folders = new Set<string>();
  for (const file of sourceFiles(SRC)) {
    const parts = relative(SRC, dirname(file)).split(sep).filter((part) => part !== '');
    for (let depth = 1; depth <= parts.length; depth++) folders.add(parts.slice(0, depth).join('/'));
  }
  return [...folders].sort();
}
