import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MALFORMED_CASES, PROPERTIES_CASES } from './properties-cases.js';

/**
 * The expectations of properties-cases.ts checked against a real `java.util.Properties`, so
 * "faithful to Java" is measured, not assumed. Java is already required by the ZooKeeper test
 * harness; one JVM start (single-file source launch) loads every case.
 */
const workDir = mkdtempSync(join(tmpdir(), 'properties-java-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

function loadWithJava(texts: readonly string[]): unknown[] {
  const files = texts.map((text, index) => {
    const file = join(workDir, `case-${index}.properties`);
    writeFileSync(file, text, 'utf8');
    return file;
  });
  const program = fileURLToPath(new URL('./java/DumpProperties.java', import.meta.url));
  const output = execFileSync('java', [program, ...files], { encoding: 'utf8' });
  return output.trimEnd().split('\n').map((line): unknown => JSON.parse(line));
}

describe('properties cases agree with java.util.Properties', () => {
  const cases = [...PROPERTIES_CASES, ...MALFORMED_CASES.map((malformed) => ({ ...malformed, expected: null }))];
  const results = loadWithJava(cases.map((testCase) => testCase.text));

  it.each(cases.map((testCase, index) => ({ ...testCase, actual: results[index] })))('$name', ({ expected, actual }) => {
    if (expected === null) {
      expect(actual).toEqual({ error: expect.stringContaining('Malformed') });
    } else {
      expect(actual).toEqual(expected);
    }
  });
});
