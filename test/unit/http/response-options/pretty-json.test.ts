import { describe, expect, it } from 'vitest';
import { prettyJson } from '../../../../src/http/response-options/pretty-json.js';

describe('prettyJson: Elasticsearch ?pretty (Jackson DefaultPrettyPrinter, two-space indents, lfAtEnd)', () => {
  it('writes `name : value`, one member per line, and ends with a line feed', () => {
    expect(prettyJson({ took: 3, errors: false, items: [{ index: { _id: 'a/1', status: 201 } }] })).toBe(
      [
        '{',
        '  "took" : 3,',
        '  "errors" : false,',
        '  "items" : [',
        '    {',
        '      "index" : {',
        '        "_id" : "a/1",',
        '        "status" : 201',
        '      }',
        '    }',
        '  ]',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('writes empty containers as `{ }` and `[ ]`, scalars in arrays one per line', () => {
    expect(prettyJson({ aliases: {}, tags: [], mixed: [1, null, 'x'] })).toBe(
      ['{', '  "aliases" : { },', '  "tags" : [ ],', '  "mixed" : [', '    1,', '    null,', '    "x"', '  ]', '}', ''].join('\n'),
    );
    expect(prettyJson({})).toBe('{ }\n');
  });

  it('escapes names and strings as JSON does', () => {
    expect(prettyJson({ 'a"b': 'line\nbreak' })).toBe('{\n  "a\\"b" : "line\\nbreak"\n}\n');
  });
});
