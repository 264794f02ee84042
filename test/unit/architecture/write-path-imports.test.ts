import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, localImports, sourceFiles } from './source-imports.js';

/** `file`'s imports that resolve into `folder` (both relative to src/). */
function importsInto(file: string, folder: string): string[] {
  const target = join(SRC, folder) + sep;
  return localImports(file)
    .filter((imported) => imported.startsWith(target))
    .map((imported) => `${relative(SRC, file)} imports ${relative(SRC, imported)}`);
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

/** Header names of the answers the edge writes; the write path says what it means instead (AnswerNotes). */
const HEADER_NAMES = /['"](?:Retry-After|X-Dead-Letter-Id|X-Request-Id|WWW-Authenticate|X-Lock-Priority)['"]/i;

describe('write/ speaks of outcomes, not HTTP', () => {
  it('names no response header and has no file named for HTTP', () => {
    const files = sourceFiles(join(SRC, 'write'));
    expect(files.filter((file) => HEADER_NAMES.test(readFileSync(file, 'utf8'))).map((file) => relative(SRC, file))).toEqual([]);
    expect(files.filter((file) => /http/i.test(relative(join(SRC, 'write'), file))).map((file) => relative(SRC, file))).toEqual([]);
  });

  it('the check sees a header name where there is one', () => {
    expect(HEADER_NAMES.test(readFileSync(join(SRC, 'http', 'failed-write.ts'), 'utf8'))).toBe(true);
  });
});

describe('one list of hop-by-hop headers', () => {
  it('is named in src/elasticsearch/hop-by-hop.ts alone', () => {
    const listing = sourceFiles(SRC).filter((file) => /['"]proxy-connection['"]/.test(readFileSync(file, 'utf8')));
    expect(listing.map((file) => relative(SRC, file))).toEqual([join('elasticsearch', 'hop-by-hop.ts')]);
  });
});

describe('legacy configuration key names', () => {
  it('the lock wait timeouts are read from their legacy names only in config-keys.ts', () => {
    const legacy = /zookeeper\.(?:foregound|backgound|foreground|background)\.task\.timeout/;
    const naming = sourceFiles(SRC).filter((file) => legacy.test(readFileSync(file, 'utf8')));
    expect(naming.map((file) => relative(SRC, file))).toEqual([join('config', 'config-keys.ts')]);
  });
});
