import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, localImports, sourceFiles, sourceFolders } from './source-imports.js';

const UNIT = resolve(import.meta.dirname, '..');

/** Unit-test folders about the repository itself rather than about a folder of src/. */
const ABOUT_THE_REPOSITORY = ['architecture', 'deploy', 'docs', 'scripts'];

/** Fixture folders kept beside the tests that read them. */
const FIXTURES = ['config/java', 'write/reference'];

/** Every folder under `dir`, as paths relative to it with `/` separators. */
function foldersUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = prefix + entry.name;
      return [path, ...foldersUnder(join(dir, entry.name), `${path}/`)];
    });
}

/** The unit-test folders that mirror no folder of src/ and are neither about the repository nor fixtures. */
function strayFolders(unitFolders: readonly string[], isSourceFolder: (path: string) => boolean): string[] {
  return unitFolders.filter((path) => {
    const top = path.split('/')[0] ?? path;
    if (ABOUT_THE_REPOSITORY.includes(top)) return false;
    if (FIXTURES.some((fixture) => path === fixture || path.startsWith(`${fixture}/`))) return false;
    return !isSourceFolder(path);
  });
}

/** The src/ files a test reads: its own imports and those of the test helpers it imports. */
function sourceFilesRead(testFile: string): string[] {
  const direct = localImports(testFile);
  const helpers = direct.filter((file) => !file.startsWith(SRC + sep) && existsSync(file));
  return [...direct, ...helpers.flatMap(localImports)].filter((file) => file.startsWith(SRC + sep));
}

/** A unit test belongs in test/unit/<folder> when it reads something from src/<folder> (or below). */
function misplaced(folder: string, read: readonly string[]): boolean {
  if (ABOUT_THE_REPOSITORY.includes(folder.split('/')[0] ?? folder)) return false;
  if (read.length === 0) return false;
  return !read.some((file) => file.startsWith(join(SRC, folder) + sep));
}

describe('test/unit mirrors src/', () => {
  it('each unit test sits in the folder of something it tests', () => {
    const tests = sourceFiles(UNIT).filter((file) => file.endsWith('.test.ts'));
    expect(tests.length).toBeGreaterThan(50);
    const wrong = tests.filter((file) => misplaced(relative(UNIT, dirname(file)).split(sep).join('/'), sourceFilesRead(file)));
    expect(wrong.map((file) => relative(UNIT, file))).toEqual([]);
  });

  it('the check sees a test of the ZooKeeper client kept under lock/', () => {
    expect(misplaced('lock', [join(SRC, 'zookeeper-client', 'zk-errors.ts')])).toBe(true);
    expect(misplaced('zookeeper-client', [join(SRC, 'zookeeper-client', 'zk-errors.ts')])).toBe(false);
  });

  it('each folder of test/unit is a folder of src/ (or about the repository, or fixtures)', () => {
    const source = new Set(sourceFolders());
    expect(strayFolders(foldersUnder(UNIT), (path) => source.has(path))).toEqual([]);
  });

  it('the check sees a folder that mirrors nothing', () => {
    const source = new Set(['lock', 'lock/zookeeper', 'zookeeper-client']);
    expect(strayFolders(['lock', 'lock/zookeeper', 'zookeeper', 'docs', 'config/java'], (path) => source.has(path))).toEqual(['zookeeper']);
  });
});
