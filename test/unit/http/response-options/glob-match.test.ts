import { describe, expect, it } from 'vitest';
import { globMatch } from '../../../../src/http/response-options/glob-match.js';

/** Elasticsearch's Glob.globMatch: `*` is any run of characters, nothing else is special. */
const CASES: ReadonlyArray<readonly [string, string, boolean]> = [
  ['status', 'status', true],
  ['status', 'Status', false],
  ['*', '', true],
  ['*', 'anything', true],
  ['st*', 'status', true],
  ['st*', 'st', true],
  ['*us', 'status', true],
  ['*us', 'us', true],
  ['*at*', 'status', true],
  ['*at*', 'stutus', false],
  ['s*t*s', 'status', true],
  ['s*t*s', 'stus', true],
  ['s*x*s', 'status', false],
  ['**', 'x', true],
  ['a**b', 'axyb', true],
  ['a*b', 'ab', true],
  ['a*b', 'a', false],
  ['?', 'x', false],
  ['a.b', 'axb', false],
  ['_i*', '_index', true],
  ['_i*', '_id', true],
  ['_i*', 'id', false],
];

describe('globMatch', () => {
  it.each(CASES)('%s against %s: %s', (pattern, text, expected) => {
    expect(globMatch(pattern, text)).toBe(expected);
  });
});
