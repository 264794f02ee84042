import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseProperties } from '../../../src/config/properties-parser.js';
import { MALFORMED_CASES, PROPERTIES_CASES } from './properties-cases.js';

function lastWins(text: string): Record<string, string> {
  return Object.fromEntries(parseProperties(text, 'test.properties').map((entry) => [entry.key, entry.value]));
}

describe('parseProperties', () => {
  it.each(PROPERTIES_CASES)('$name', ({ text, expected }) => {
    expect(lastWins(text)).toEqual(expected);
  });

  it.each(MALFORMED_CASES)('rejects $name with the file and line', ({ text }) => {
    expect(() => parseProperties(`# first\n${text}`, 'x.properties')).toThrow(ConfigError);
    expect(() => parseProperties(`# first\n${text}`, 'x.properties')).toThrow(/^x\.properties:2: malformed \\uXXXX escape/);
  });

  it('reports the line a logical line starts on', () => {
    const entries = parseProperties('# c\n\na=one\\\n  two\nb=3\n', 'f');
    expect(entries).toEqual([
      { key: 'a', value: 'onetwo', line: 3 },
      { key: 'b', value: '3', line: 5 },
    ]);
  });

  it('keeps every occurrence of a repeated key in file order', () => {
    expect(parseProperties('a=1\nb=2\na=3\n', 'f').map((entry) => entry.value)).toEqual(['1', '2', '3']);
  });

  it('drops a UTF-8 byte-order mark instead of gluing it to the first key', () => {
    expect(lastWins('\uFEFFzookeeper.servers=h:1\n')).toEqual({ 'zookeeper.servers': 'h:1' });
  });
});
