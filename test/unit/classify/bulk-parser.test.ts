import { describe, expect, it } from 'vitest';
import { parseBulkBody, sliceBulkBody, type BulkItem } from '../../../src/classify/bulk-parser.js';
import { ProxyError } from '../../../src/errors/proxy-error.js';

const body = (...lines: string[]): Buffer => Buffer.from(lines.map((line) => `${line}\n`).join(''));
const summary = (items: readonly BulkItem[]) => items.map(({ position, action, index, id, line }) => ({ position, action, index, id, line }));

describe('parseBulkBody: valid bodies', () => {
  it('reads every action with its index, id and line, sources skipped', () => {
    const items = parseBulkBody(
      body(
        '{"index":{"_index":"a","_id":"1"}}',
        '{"title":"x"}',
        '{"create":{"_id":"2"}}',
        '{"title":"y"}',
        '{"update":{"_index":"b","_id":"3","retry_on_conflict":3}}',
        '{"doc":{"n":1}}',
        '{"delete":{"_index":"c","_id":"4"}}',
        '{"index":{}}',
        '{"title":"auto"}',
      ),
      'default',
    );
    expect(summary(items)).toEqual([
      { position: 0, action: 'index', index: 'a', id: '1', line: 1 },
      { position: 1, action: 'create', index: 'default', id: '2', line: 3 },
      { position: 2, action: 'update', index: 'b', id: '3', line: 5 },
      { position: 3, action: 'delete', index: 'c', id: '4', line: 7 },
      { position: 4, action: 'index', index: 'default', id: null, line: 8 },
    ]);
  });

  it('skips blank action lines, counting them in line numbers, and tolerates \\r\\n', () => {
    const raw = Buffer.from('\n  \r\n{"delete":{"_index":"a","_id":"1"}}\r\n\n{"index":{"_index":"a","_id":"2"}}\r\n{"x":1}\r\n');
    const items = parseBulkBody(raw, null);
    expect(summary(items)).toEqual([
      { position: 0, action: 'delete', index: 'a', id: '1', line: 3 },
      { position: 1, action: 'index', index: 'a', id: '2', line: 5 },
    ]);
    expect(raw.subarray(items[1]?.sourceLineStart ?? 0, items[1]?.sourceLineEnd ?? 0).toString()).toBe('{"x":1}\r');
  });

  it('takes the line after index/create/update as source even when it is blank or not JSON', () => {
    const items = parseBulkBody(body('{"index":{"_index":"a","_id":"1"}}', '', '{"create":{"_index":"a","_id":"2"}}', 'not json'), null);
    expect(summary(items).map((item) => item.id)).toEqual(['1', '2']);
  });

  it('reads _id and _index the way Elasticsearch does: numbers and booleans as written, null = absent', () => {
    const items = parseBulkBody(
      body(
        '{"delete":{"_index":"a","_id":42}}',
        '{"delete":{"_index":"a","_id":-1.50e+3}}',
        '{"delete":{"_index":"a","_id":true}}',
        '{"index":{"_index":null,"_id":null,"unknown_but_null":null}}',
        '{}',
        '{"delete":{"_index":7,"_id":"x"}}',
      ),
      'd',
    );
    expect(items.map((item) => [item.index, item.id])).toEqual([
      ['a', '42'],
      ['a', '-1.50e+3'],
      ['a', 'true'],
      ['d', null],
      ['7', 'x'],
    ]);
  });

  it('decodes JSON string escapes in ids', () => {
    const items = parseBulkBody(body('{"delete":{"_index":"a","_id":"a\\"b\\\\c\\/d\\u00e9\\ud83d\\udca9\\n"}}'), null);
    expect(items[0]?.id).toBe('a"b\\c/dé💩\n');
  });

  it('keeps non-ASCII ids and indices', () => {
    const items = parseBulkBody(body('{"delete":{"_index":"индекс","_id":"ключ-é-💩"}}'), null);
    expect(items[0]).toMatchObject({ index: 'индекс', id: 'ключ-é-💩' });
  });

  it('accepts every metadata key Elasticsearch knows, objects for _source and dynamic_templates', () => {
    const items = parseBulkBody(
      body(
        '{"index":{"_index":"a","_id":"1","routing":"r","op_type":"create","version":3,"version_type":"external","if_seq_no":1,"if_primary_term":1,"pipeline":"p","require_alias":false,"require_data_stream":false,"list_executed_pipelines":true,"dynamic_templates":{"f":"t"}}}',
        '{}',
        '{"update":{"_index":"a","_id":"2","_source":{"includes":["a"],"excludes":[]}}}',
        '{"doc":{}}',
        '{"update":{"_index":"a","_id":"3","_source":true}}',
        '{"doc":{}}',
      ),
      null,
    );
    expect(items).toHaveLength(3);
  });

  it('accepts _type only for typed (compatible-with=7) requests', () => {
    const raw = body('{"index":{"_index":"a","_type":"_doc","_id":"1"}}', '{}');
    expect(parseBulkBody(raw, null, { allowTypeMetadata: true })).toHaveLength(1);
    expectBulkError(() => parseBulkBody(raw, null), 'Action/metadata line [1] contains an unknown parameter [_type]');
  });

  it('does not choke on a byte-order mark or whitespace inside the action line', () => {
    const raw = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body(' { "delete" : { "_index" : "a" , "_id" : "1" } } \t')]);
    expect(summary(parseBulkBody(raw, null))).toEqual([{ position: 0, action: 'delete', index: 'a', id: '1', line: 1 }]);
  });

  it('returns ids longer than 512 bytes as written (whether Elasticsearch accepts them is document-id.ts)', () => {
    const longId = 'é'.repeat(257);
    const items = parseBulkBody(body(`{"delete":{"_index":"a","_id":"${longId}"}}`), null);
    expect(items[0]?.id).toBe(longId);
  });

  it('returns an escaped unpaired surrogate as the lone code unit Jackson reads', () => {
    expect(parseBulkBody(body('{"delete":{"_index":"a","_id":"\\ud800x\\uDC00"}}'), null)[0]?.id).toBe('\ud800x\udc00');
  });

  it('returns an empty _id for index/create as is (a key like any other)', () => {
    expect(parseBulkBody(body('{"index":{"_index":"a","_id":""}}', '{}'), null)[0]?.id).toBe('');
  });
});

describe('parseBulkBody: rejected bodies name the line like Elasticsearch', () => {
  const rows: ReadonlyArray<readonly [string, Buffer, string]> = [
    ['empty body', Buffer.alloc(0), 'request body is required'],
    ['only blank lines', Buffer.from('\n\n \n'), 'Validation Failed: 1: no requests added;'],
    ['missing final newline', Buffer.from('{"delete":{"_index":"a","_id":"1"}}'), 'The bulk request must be terminated by a newline [\\n]'],
    ['missing final newline after a source', Buffer.from('{"index":{"_index":"a"}}\n{"a":1}'), 'The bulk request must be terminated by a newline [\\n]'],
    ['array action line', body('{"delete":{"_index":"a","_id":"1"}}', '[1]'), 'Malformed action/metadata line [2], expected START_OBJECT but found [START_ARRAY]'],
    ['string action line', body('"index"'), 'Malformed action/metadata line [1], expected START_OBJECT but found [VALUE_STRING]'],
    ['number action line', body('12'), 'Malformed action/metadata line [1], expected START_OBJECT but found [VALUE_NUMBER]'],
    ['boolean action line', body('true'), 'Malformed action/metadata line [1], expected START_OBJECT but found [VALUE_BOOLEAN]'],
    ['null action line', body('null'), 'Malformed action/metadata line [1], expected START_OBJECT but found [VALUE_NULL]'],
    ['empty object', body('{}'), 'Malformed action/metadata line [1], expected FIELD_NAME but found [END_OBJECT]'],
    ['unknown action', body('{"upsert":{"_id":"1"}}', '{}'), 'Malformed action/metadata line [1], expected field [create], [delete], [index] or [update] but found [upsert]'],
    ['action with a string', body('{"index":"x"}'), 'Malformed action/metadata line [1], expected START_OBJECT or END_OBJECT but found [VALUE_STRING]'],
    ['action with null', body('{"delete":null}'), 'Malformed action/metadata line [1], expected START_OBJECT or END_OBJECT but found [VALUE_NULL]'],
    ['action with array', body('{"delete":[]}'), 'Malformed action/metadata line [1], expected START_OBJECT or END_OBJECT but found [START_ARRAY]'],
    ['unknown metadata key', body('{"index":{"_index":"a","colour":"red"}}', '{}'), 'Action/metadata line [1] contains an unknown parameter [colour]'],
    ['array metadata value', body('{"delete":{"_index":"a","_id":["1"]}}'), 'Malformed action/metadata line [1], expected a simple value for field [_id] but found [START_ARRAY]'],
    ['object metadata value', body('{"delete":{"_index":"a","_id":{"x":1}}}'), 'Malformed action/metadata line [1], expected a simple value for field [_id] but found [START_OBJECT]'],
    ['object for an unknown key', body('{"delete":{"_index":"a","x":{}}}'), 'Malformed action/metadata line [1], expected a simple value for field [x] but found [START_OBJECT]'],
    ['two actions on one line', body('{"index":{"_index":"a","_id":"1"},"delete":{"_index":"a","_id":"2"}}', '{}'), 'Malformed action/metadata line [1], expected END_OBJECT but found [FIELD_NAME]'],
    ['data after the closing brace', body('{"delete":{"_index":"a","_id":"1"}} {"x":1}'), 'Malformed action/metadata line [1], unexpected data after the closing brace'],
    ['unclosed action', body('{"delete":{"_index":"a","_id":"1"}'), 'Malformed action/metadata line [1], unexpected end of line, the action object is not closed'],
    ['index missing', body('{"delete":{"_id":"1"}}'), 'Validation Failed: 1: index is missing (action/metadata line [1]);'],
    ['delete without id', body('{"delete":{"_index":"a"}}'), 'Validation Failed: 1: id is missing (action/metadata line [1]);'],
    ['delete with empty id', body('{"delete":{"_index":"a","_id":""}}'), 'Validation Failed: 1: id is missing (action/metadata line [1]);'],
    ['update without id', body('{"update":{"_index":"a"}}', '{}'), 'Validation Failed: 1: id is missing (action/metadata line [1]);'],
    ['missing source line', body('{"delete":{"_index":"a","_id":"1"}}', '{"index":{"_index":"a","_id":"2"}}'), 'action/metadata line [2] (index) must be followed by a source line'],
  ];
  it.each(rows)('%s', (_name, raw, message) => {
    expectBulkError(() => parseBulkBody(raw, null), message);
  });

  const syntax: ReadonlyArray<readonly [string, string]> = [
    ['junk', 'x'],
    ['close marker', '}'],
    ['unterminated string', '{"delete":{"_index":"a'],
    ['duplicate key', '{"delete":{"_index":"a","_index":"b","_id":"1"}}'],
    ['trailing comma', '{"delete":{"_index":"a","_id":"1",}}'],
    ['missing colon', '{"delete":{"_index" "a"}}'],
    ['bad escape', '{"delete":{"_index":"a","_id":"\\x"}}'],
    ['bad unicode escape', '{"delete":{"_index":"a","_id":"\\u12G4"}}'],
    ['leading zero', '{"delete":{"_index":"a","_id":01}}'],
    ['bare minus', '{"delete":{"_index":"a","_id":-}}'],
    ['bad literal', '{"delete":{"_index":"a","_id":tru}}'],
    ['control character in string', '{"delete":{"_index":"a","_id":"a\tb"}}'],
    ['single quotes', "{'delete':{}}"],
    ['comment', '{"delete":{"_index":"a","_id":"1"}} // note'],
    ['unclosed nested object', '{"index":{"_index":"a","dynamic_templates":{"a":"b"}}'],
  ];
  it.each(syntax)('JSON syntax error (%s) is a 400 naming the line', (_name, line) => {
    const error = catchError(() => parseBulkBody(body('{"delete":{"_index":"a","_id":"0"}}', line), null));
    expect(error).toBeInstanceOf(ProxyError);
    expect(error).toMatchObject({ code: 'BAD_BULK_BODY', meta: { line: 2 } });
    expect((error as ProxyError).message).toMatch(/^(Malformed action\/metadata line \[2\]|Action\/metadata line \[2\])/);
  });

  it('rejects invalid UTF-8 in an action line, naming the line', () => {
    const raw = Buffer.concat([Buffer.from('{"delete":{"_index":"a","_id":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}\n')]);
    expectBulkError(() => parseBulkBody(raw, null), /^Malformed action\/metadata line \[1\], failed to parse JSON: invalid UTF-8/);
    const outsideString = Buffer.concat([Buffer.from('{"delete":{"_index":"a","_id":"1"}}'), Buffer.from([0xff]), Buffer.from('\n')]);
    expectBulkError(() => parseBulkBody(outsideString, null), /^Malformed action\/metadata line \[1\]/);
  });

  it('refuses JSON nested deeper than Jackson allows', () => {
    const deep = `{"index":{"_index":"a","dynamic_templates":${'{"a":'.repeat(1100)}1${'}'.repeat(1100)}}}`;
    expectBulkError(() => parseBulkBody(body(deep, '{}'), null), /nesting depth/);
  });
});

describe('sliceBulkBody', () => {
  const raw = Buffer.from(
    '{"index":{"_index":"a","_id":"1"}}\r\n{"v":"é"}\r\n\n{"delete":{"_index":"a","_id":"2"}}\n{"update":{"_index":"a","_id":"3"}}\n{"doc":{}}\n',
  );
  const items = parseBulkBody(raw, null);

  it('rebuilds the whole body minus blank lines byte for byte', () => {
    expect(sliceBulkBody(raw, items).toString()).toBe(raw.toString().replace('\r\n\n{"delete"', '\r\n{"delete"'));
  });

  it('keeps only the chosen items, in the order given, each line ending in \\n', () => {
    const [first, second, third] = items;
    if (first === undefined || second === undefined || third === undefined) throw new Error('three items expected');
    expect(sliceBulkBody(raw, [first, third]).toString()).toBe('{"index":{"_index":"a","_id":"1"}}\r\n{"v":"é"}\r\n{"update":{"_index":"a","_id":"3"}}\n{"doc":{}}\n');
    expect(sliceBulkBody(raw, [second]).toString()).toBe('{"delete":{"_index":"a","_id":"2"}}\n');
    expect(sliceBulkBody(raw, [])).toHaveLength(0);
  });

  it('round-trips: a slice parses to the same items', () => {
    const [first, , third] = items;
    if (first === undefined || third === undefined) throw new Error('items expected');
    const slice = sliceBulkBody(raw, [first, third]);
    expect(parseBulkBody(slice, null).map(({ action, index, id }) => ({ action, index, id }))).toEqual([
      { action: 'index', index: 'a', id: '1' },
      { action: 'update', index: 'a', id: '3' },
    ]);
  });
});

describe('parseBulkBody performance', () => {
  it('parses 1,000 items of ~1 KB in a few milliseconds', () => {
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++) {
      lines.push(JSON.stringify({ index: { _index: 'products', _id: `doc-${i}` } }), JSON.stringify({ text: 'x'.repeat(950), n: i }));
    }
    const raw = body(...lines);
    for (let i = 0; i < 20; i++) parseBulkBody(raw, null);
    const runs = 50;
    const started = performance.now();
    for (let i = 0; i < runs; i++) parseBulkBody(raw, null);
    const perParse = (performance.now() - started) / runs;
    console.log(`bulk parse: ${(raw.length / 1e6).toFixed(2)} MB, 1000 items, ${perParse.toFixed(2)} ms per parse`);
    // Generous bound for loaded CI machines; measured ~1-2 ms.
    expect(perParse).toBeLessThan(25);
  });
});

function expectBulkError(run: () => unknown, message: string | RegExp): void {
  const error = catchError(run);
  expect(error).toBeInstanceOf(ProxyError);
  expect(error).toMatchObject({ code: 'BAD_BULK_BODY' });
  if (typeof message === 'string') expect((error as ProxyError).message).toBe(message);
  else expect((error as ProxyError).message).toMatch(message);
}

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
