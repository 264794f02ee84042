import { JsonLineReader } from '../../classify/json-line-reader.js';

/** A simple metadata value of an action line: its text and its bytes `[start, end)` in the body. */
export interface MetadataValue {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** Where a fence can be written into an action line, and what the line already says. */
export interface ActionMetadata {
  /** Byte offset right after the metadata object's `{`. */
  readonly openAt: number;
  /** `{}`: a field inserted needs no separating comma. */
  readonly empty: boolean;
  /** Simple values by key (objects such as `dynamic_templates` are not listed). */
  readonly values: ReadonlyMap<string, MetadataValue>;
}

/**
 * Reads an action line the bulk parser has already validated (`parseActionLine`), keeping byte
 * offsets so a fence can be inserted without re-serializing it: re-serializing could change the
 * line (a numeric `_id` beyond 2^53, escapes), and the line must reach Elasticsearch as written.
 */
export function readActionMetadata(body: Buffer, start: number, end: number): ActionMetadata {
  const reader = new JsonLineReader(body, start, end);
  reader.expect('{');
  reader.readString(); // the action: the bulk parser has read it already
  reader.expect(':');
  reader.expect('{');
  const openAt = reader.offset;
  const values = new Map<string, MetadataValue>();
  if (reader.accept('}')) return { openAt, empty: true, values };
  do {
    const key = reader.readString();
    reader.expect(':');
    const token = reader.peekValueToken();
    const valueStart = reader.offset;
    if (token === 'START_OBJECT' || token === 'START_ARRAY' || token === 'VALUE_NULL') {
      reader.skipValue();
      continue;
    }
    const text = token === 'VALUE_STRING' ? reader.readString() : token === 'VALUE_NUMBER' ? reader.readNumberText() : reader.readLiteral();
    values.set(key, { text, start: valueStart, end: reader.offset });
  } while (reader.accept(','));
  return { openAt, empty: false, values };
}
