import { ProxyError } from '../errors/proxy-error.js';
import { JsonLineReader, JsonSyntaxError, type TokenName } from './json-line-reader.js';

export type BulkAction = 'index' | 'create' | 'update' | 'delete';

export interface ParsedActionLine {
  readonly action: BulkAction;
  /** `_index` of the line, `null` when absent (or JSON null): the path's index applies. */
  readonly index: string | null;
  /** `_id` as Elasticsearch reads it (`parser.text()`: numbers and booleans as written), or `null`. */
  readonly id: string | null;
}

export interface ActionLineOptions {
  /** Accept `_type` (compatible-with=7 requests to typed routes); otherwise it is an unknown parameter. */
  readonly allowTypeMetadata: boolean;
}

const ACTIONS: readonly BulkAction[] = ['create', 'delete', 'index', 'update'];

/** Metadata keys whose value Elasticsearch accepts as a simple value (`BulkRequestParser`). */
const SIMPLE_VALUE_KEYS: ReadonlySet<string> = new Set([
  '_index',
  '_id',
  'routing',
  'op_type',
  'version',
  'version_type',
  'if_seq_no',
  'if_primary_term',
  'retry_on_conflict',
  'pipeline',
  '_source',
  'require_alias',
  'require_data_stream',
  'list_executed_pipelines',
]);

/** Metadata keys Elasticsearch accepts as an object. */
const OBJECT_VALUE_KEYS: ReadonlySet<string> = new Set(['_source', 'dynamic_templates']);

/**
 * Parses one action/metadata line (bytes `start`..`end`, newline excluded) as Elasticsearch 9's
 * strict `BulkRequestParser` does, with its messages. Returns `null` for a blank line (skipped, as
 * in Elasticsearch). Deliberately stricter than 8.x, which only warns about extra keys, trailing data
 * and unknown actions: an ignored extra key could be a second action we would then not lock.
 */
export function parseActionLine(
  body: Buffer,
  start: number,
  end: number,
  line: number,
  options: ActionLineOptions,
): ParsedActionLine | null {
  const reader = new JsonLineReader(body, start, end);
  try {
    return readActionLine(reader, line, options);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw malformed(line, `failed to parse JSON: ${error.message}`);
    throw error;
  }
}

function readActionLine(reader: JsonLineReader, line: number, options: ActionLineOptions): ParsedActionLine | null {
  if (reader.atEnd()) return null;
  const first = reader.peekValueToken();
  if (first !== 'START_OBJECT') throw expected(line, 'START_OBJECT', first);
  reader.expect('{');
  if (reader.peek() !== 0x22) {
    if (reader.peek() === 0x7d) throw expected(line, 'FIELD_NAME', 'END_OBJECT');
    throw reader.unexpected('expected a field name');
  }
  const actionName = reader.readString();
  reader.expect(':');
  const action = ACTIONS.find((known) => known === actionName);
  if (action === undefined) {
    throw malformed(line, `expected field [create], [delete], [index] or [update] but found [${actionName}]`);
  }
  const valueToken = reader.peekValueToken();
  if (valueToken !== 'START_OBJECT') throw malformed(line, `expected START_OBJECT or END_OBJECT but found [${valueToken}]`);
  const metadata = readMetadata(reader, line, options);
  requireProperlyClosed(reader, line);
  return { action, ...metadata };
}

function readMetadata(reader: JsonLineReader, line: number, options: ActionLineOptions): { index: string | null; id: string | null } {
  let index: string | null = null;
  let id: string | null = null;
  const seen = new Set<string>();
  reader.expect('{');
  if (reader.accept('}')) return { index, id };
  do {
    if (reader.peek() !== 0x22) throw reader.unexpected('expected a field name');
    const key = reader.readString();
    // Elasticsearch parses JSON with strict duplicate detection.
    if (seen.has(key)) throw reader.unexpected(`duplicate field '${key}'`);
    seen.add(key);
    reader.expect(':');
    const value = readMetadataValue(reader, line, key, options);
    if (key === '_index' && value !== null) index = value;
    if (key === '_id' && value !== null) id = value;
  } while (reader.accept(','));
  reader.expect('}');
  return { index, id };
}

/** The value's text for simple values, `null` for JSON null and for accepted objects. */
function readMetadataValue(reader: JsonLineReader, line: number, key: string, options: ActionLineOptions): string | null {
  const token = reader.peekValueToken();
  switch (token) {
    case 'START_ARRAY':
      throw malformed(line, `expected a simple value for field [${key}] but found [START_ARRAY]`);
    case 'START_OBJECT':
      if (!OBJECT_VALUE_KEYS.has(key)) throw malformed(line, `expected a simple value for field [${key}] but found [START_OBJECT]`);
      reader.skipValue();
      return null;
    case 'VALUE_NULL':
      // Elasticsearch skips null values without looking at the key, unknown keys included.
      reader.readLiteral();
      return null;
    default: {
      const text = token === 'VALUE_STRING' ? reader.readString() : token === 'VALUE_NUMBER' ? reader.readNumberText() : reader.readLiteral();
      const known = SIMPLE_VALUE_KEYS.has(key) || (key === '_type' && options.allowTypeMetadata);
      if (!known) throw new ProxyError('BAD_BULK_BODY', `Action/metadata line [${line}] contains an unknown parameter [${key}]`, { meta: { line } });
      return text;
    }
  }
}

function requireProperlyClosed(reader: JsonLineReader, line: number): void {
  if (reader.atEnd()) throw malformed(line, 'unexpected end of line, the action object is not closed');
  if (reader.peek() === 0x2c) throw expected(line, 'END_OBJECT', 'FIELD_NAME');
  reader.expect('}');
  if (!reader.atEnd()) throw malformed(line, 'unexpected data after the closing brace');
}

function expected(line: number, wanted: TokenName, found: TokenName): ProxyError {
  return malformed(line, `expected ${wanted} but found [${found}]`);
}

function malformed(line: number, detail: string): ProxyError {
  return new ProxyError('BAD_BULK_BODY', `Malformed action/metadata line [${line}], ${detail}`, { meta: { line } });
}
