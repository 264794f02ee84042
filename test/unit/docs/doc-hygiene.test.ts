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

/**
 * Phrases about an earlier state of the code. Docs and comments describe what the proxy does today;
 * git and the CHANGELOG keep what it did before. "Is used to" (a purpose) stays allowed.
 */
const EARLIER_STATES: readonly { readonly pattern: RegExp; readonly what: string }[] = [
  { pattern: /(?<!\b(?:is|are|was|were|be|been|being|gets?|got)\s|\()\bused to\b/i, what: 'an earlier state ("used to")' },
  { pattern: /\bbefore this (?:change|layout|fix|build|commit|round|session|version|rewrite)\b/i, what: 'an earlier state ("before this …")' },
  { pattern: /\bthis build\b/i, what: 'a build compared with another ("this build")' },
  { pattern: /\bmain now\b|\bold main\b|\bon main\b/i, what: 'a branch\'s history ("main now", "on main")' },
  { pattern: /\bthe old (?:code|engine|addon|build|layout|stand-in|forwarder)\b/i, what: 'an earlier state ("the old …")' },
];

function offences(text: string, kinds = WORKING_NOTES): string[] {
  return text.split('\n').flatMap((line, i) => kinds.filter(({ pattern }) => pattern.test(line)).map(({ what }) => `${i + 1}: ${what}: ${line.trim()}`));
}

/** What the docs and src/ comments must not hold; the CHANGELOG is history by design. */
function kindsFor(file: string): readonly { readonly pattern: RegExp; readonly what: string }[] {
  return file === 'CHANGELOG.md' ? WORKING_NOTES : [...WORKING_NOTES, ...EARLIER_STATES];
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
    expect(offences(readFileSync(join(REPO, file), 'utf8'), kindsFor(file))).toEqual([]);
  });

  it('in the comments of src/, bench/ and scripts/', () => {
    const found = ['src', 'bench', 'scripts'].flatMap(sourceFiles).flatMap((file) => offences(commentsOf(readFileSync(join(REPO, file), 'utf8')), kindsFor(file)).map((offence) => `${file}:${offence}`));
    expect(found).toEqual([]);
  });

  it('recognises each kind', () => {
    const samples = ['fixed (issue #14)', 'the run of 2026-11-26 00:11', '0.94x {05:46} [05:18]', 'before this stop', 'see #12 hole'];
    expect(samples.map((sample) => offences(sample).length)).toEqual([1, 1, 1, 1, 1]);
    expect(offences('Latest run: 2026-11-26 05:45 UTC, 453 s; 0.8x [0.7x–0.9x]')).toEqual([]);
  });

  it('recognises phrases about an earlier state, and lets a purpose pass', () => {
    const earlier = ['a flapping link used to turn into lost locks', 'before this change it did', 'measured on this build', 'main now keeps it', 'the old engine did'];
    expect(earlier.map((sample) => offences(sample, kindsFor('docs/x.md')).length)).toEqual([1, 1, 1, 1, 1]);
    const today = ['the answer is used to merge bulks', 'Buffers the answer (used to merge bulk responses)', 'no longer vouched for', 'ordered before this release'];
    expect(today.map((sample) => offences(sample, kindsFor('docs/x.md')).length)).toEqual([0, 0, 0, 0]);
    expect(offences('the old engine did', kindsFor('CHANGELOG.md'))).toEqual([]);
  });

  it('reads comments, not code', () => {
    expect(commentsOf("const a = 'x'; // why\n/* one\n two */ b();\nc(); /* three */")).toBe('// why\n/* one\n two */ b();\n/* three */');
  });
});
