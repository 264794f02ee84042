import { JsonLineReader } from '../../classify/json-line-reader.js';

/** Where a value sits in the body: bytes `[start, end)`. */
export interface ValueBytes {
  readonly start: number;
  readonly end: number;
}

/** A simple metadata value of an action line: its text and where it sits in the body. */
export interface MetadataValue extends ValueBytes {
  readonly text: string;
}

/** Where a fence can be written into an action line, and what the line already says. */
export interface ActionMetadata {
  /** Byte offset right after the metadata object's `{`. */
  readonly openAt: number;
  /** `{}`: a field inserted needs no separating comma. */
  readonly empty: boolean;
  /** Simple values by key (objects such as `dynamic_templates` are not listed, nor nulls). */
  readonly values: ReadonlyMap<string, MetadataValue>;
  /**
   * Keys whose value is `null`. Elasticsearch skips a null before it looks at the key, so the
   * field counts as absent (Elasticsearch: server/src/main/java/org/elasticsearch/action/bulk/BulkRequestParser.java,
   * `token.isValue()` is false for VALUE_NULL); but the key is there, and a fence naming it must
   * replace the null: Elasticsearch's JSON parser refuses a field named twice.
   */
  readonly nulls: ReadonlyMap<string, ValueBytes>;
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
  const nulls = new Map<string, ValueBytes>();
  if (reader.accept('}')) return { openAt, empty: true, values, nulls };
  do {
    const key = reader.readString();
    reader.expect(':');
    const token = reader.peekValueToken();
    const valueStart = reader.offset;
    if (token === 'START_OBJECT' || token === 'START_ARRAY' || token === 'VALUE_NULL') {
      reader.skipValue();
      if (token === 'VALUE_NULL') nulls.set(key, { start: valueStart, end: reader.offset });
      continue;
    }
    const text = token === 'VALUE_STRING' ? reader.readString() : token === 'VALUE_NUMBER' ? reader.readNumberText() : reader.readLiteral();
    values.set(key, { text, start: valueStart, end: reader.offset });
  } while (reader.accept(','));
  return { openAt, empty: false, values, nulls };
}
