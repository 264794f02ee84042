import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { documentationFiles } from './markdown-files.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * What a reader cannot follow: issue numbers of this project's tracker, and notes of when a run was
 * made. The docs and comments say the reason itself instead.
 */
const WORKING_NOTES: readonly { readonly pattern: RegExp; readonly what: string }[] = [
  { pattern: /\bissues? #\d+/i, what: 'an issue number' },
  { pattern: /#\d+ hole|\bhole \d+\b/i, what: 'a numbered hole of an issue' },
  { pattern: /[{[]\d{2}:\d{2}[}\]]/, what: 'a run time in braces or brackets' },
  { pattern: /\brun of (?:20\d{2}-|\d{1,2}:\d{2})/i, what: 'a dated run' },
  { pattern: /\bthis stop\b|\bstop \d+'s\b/i, what: 'a working session' },
];

function offences(text: string): string[] {
  return text.split('\n').flatMap((line, i) => WORKING_NOTES.filter(({ pattern }) => pattern.test(line)).map(({ what }) => `${i + 1}: ${what}: ${line.trim()}`));
}

/** The comments of a TypeScript file (line and block), each line kept at its own line number. */
function commentsOf(source: string): string {
  const lines = source.split('\n');
  let inBlock = false;
  return lines
    .map((line) => {
      if (inBlock) {
        if (line.includes('*/')) inBlock = false;
        return line;
      }
      const block = line.indexOf('/*');
      const comment = line.indexOf('//');
      if (block !== -1 && (comment === -1 || block < comment)) {
        inBlock = !line.includes('*/', block + 2);
        return line.slice(block);
      }
      return comment === -1 ? '' : line.slice(comment);
    })
    .join('\n');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(dir, name));
}

describe('no issue numbers, run timestamps or working notes', () => {
  it.each(documentationFiles(REPO))('in %s', (file) => {
    expect(offences(readFileSync(join(REPO, file), 'utf8'))).toEqual([]);
  });

  it('in the comments of src/', () => {
    const found = sourceFiles('src').flatMap((file) => offences(commentsOf(readFileSync(join(REPO, file), 'utf8'))).map((offence) => `${file}:${offence}`));
    expect(found).toEqual([]);
  });

  it('recognises each kind', () => {
    const samples = ['fixed (issue #14)', 'the run of 2026-11-26 00:11', '0.94x {05:46} [05:18]', 'before this stop', 'see #12 hole'];
    expect(samples.map((sample) => offences(sample).length)).toEqual([1, 1, 1, 1, 1]);
    expect(offences('Latest run: 2026-11-26 05:45 UTC, 453 s; 0.8x [0.7x–0.9x]')).toEqual([]);
  });

  it('reads comments, not code', () => {
    expect(commentsOf("const a = 'x'; // why\n/* one\n two */ b();\nc(); /* three */")).toBe('// why\n/* one\n two */ b();\n/* three */');
  });
});
