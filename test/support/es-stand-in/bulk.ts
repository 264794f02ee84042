import type { DocumentStore } from './document-store.js';
import { resolveCreateVersion, updateSpecOf, validationErrorsOf, type DocumentWrite, type WriteAction } from './document-write.js';
import { errorResult, illegalArgument, isJsonObject, validationFailure, type JsonObject, type OperationResult } from './es-errors.js';
import { MATCH_ANY } from './version-rules.js';
import { applyWrite, type WriteOutcome } from './write-engine.js';
import { parseConditions, parseInt32, rawConditionsOfMeta } from './write-params.js';
import { autoId } from './single-writes.js';
import { duplicateFieldOf, duplicateReason } from './strict-json.js';
import { dateMathRefusal } from './index-names.js';

/** One action of a `_bulk`, in request order. */
export interface BulkEntry {
  /** The key of its item in the answer (`index` with op_type=create answers as `create`). */
  readonly action: WriteAction;
  readonly index: string;
  readonly id: string;
  readonly write: DocumentWrite;
  /** Set when the item fails before it reaches a shard (an empty `_id`): it writes nothing. */
  readonly itemFailure: OperationResult | null;
}

const ACTIONS: readonly string[] = ['index', 'create', 'update', 'delete'];
const METADATA_KEYS = new Set([
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
  'dynamic_templates',
]);

/**
 * Parses and validates an NDJSON bulk body as `BulkRequestParser` and `BulkRequest.validate` do
 * (Elasticsearch: server/src/main/java/org/elasticsearch/action/bulk/BulkRequestParser.java):
 * a malformed line or a value that does not parse fails the whole request (400
 * illegal_argument_exception), and so does any item's validation error (400
 * action_request_validation_exception listing every message). An index/create item with an empty
 * `_id` is the exception: it fails alone, as its item (400 "if _id is specified it must not be empty"),
 * and so does one whose document names a field twice (400 document_parsing_exception).
 */
export function parseBulk(store: DocumentStore, body: Buffer, pathIndex: string | undefined, compatibleWith7: boolean, urlRouting: string | null = null): BulkEntry[] | OperationResult {
  const lines = body.toString('utf8').split('\n').map((line) => line.replace(/\r$/, ''));
  const entries: BulkEntry[] = [];
  const errors: string[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    if ((lines[i] ?? '').trim() === '') continue;
    const header = parseActionLine(lines[i] ?? '', i + 1, compatibleWith7);
    if ('failure' in header) return header.failure;
    let source: unknown = null;
    let sourceFailure: OperationResult | null = null;
    if (header.action !== 'delete') {
      i += 1;
      source = parseLine(lines[i] ?? '');
      if (source === undefined) return errorResult(400, { type: 'x_content_parse_exception', reason: `Malformed source line [${i + 1}]` });
      const duplicate = duplicateFieldOf(lines[i] ?? '');
      if (duplicate !== null) {
        // An update's body is parsed with the request; a document only on its shard (DocumentParser), failing its item alone.
        if (header.action === 'update') return errorResult(400, { type: 'x_content_parse_exception', reason: duplicateReason(duplicate) });
        sourceFailure = errorResult(400, { type: 'document_parsing_exception', reason: `[${duplicate.line}:${duplicate.column}] failed to parse: ${duplicateReason(duplicate)}` });
      }
    }
    const entry = entryOf(store, header, source, pathIndex, sourceFailure, urlRouting);
    if ('failure' in entry) return entry.failure;
    if (entry.indexMissing) errors.push('index is missing');
    errors.push(...validationErrorsOf(entry.entry.write));
    entries.push(entry.entry);
  }
  if (entries.length === 0) errors.push('no requests added');
  return errors.length > 0 ? validationFailure(errors) : entries;
}

interface ActionHeader {
  readonly action: 'index' | 'create' | 'update' | 'delete';
  readonly meta: JsonObject;
  readonly line: number;
}

function parseActionLine(text: string, line: number, compatibleWith7: boolean): ActionHeader | { failure: OperationResult } {
  const parsed = parseLine(text);
  if (!isJsonObject(parsed)) return { failure: illegalArgument(`Malformed action/metadata line [${line}], expected START_OBJECT but found [${tokenOf(parsed)}]`) };
  const [action, ...extra] = Object.keys(parsed);
  if (action === undefined) return { failure: illegalArgument(`Malformed action/metadata line [${line}], expected FIELD_NAME but found [END_OBJECT]`) };
  if (!isAction(action)) {
    return { failure: illegalArgument(`Malformed action/metadata line [${line}], expected field [create], [delete], [index] or [update] but found [${action}]`) };
  }
  if (extra.length > 0) return { failure: illegalArgument(`Malformed action/metadata line [${line}], expected END_OBJECT but found [FIELD_NAME]`) };
  const duplicate = duplicateFieldOf(text);
  if (duplicate !== null) return { failure: errorResult(400, { type: 'x_content_parse_exception', reason: duplicateReason(duplicate) }) };
  const meta = parsed[action];
  if (!isJsonObject(meta)) return { failure: illegalArgument(`Malformed action/metadata line [${line}], expected START_OBJECT but found [${tokenOf(meta)}]`) };
  const given: JsonObject = {};
  for (const [key, value] of Object.entries(meta)) {
    // A null value is skipped before its key is looked at: the field counts as absent, an unknown key too.
    if (value === null) continue;
    if (!METADATA_KEYS.has(key) && !(key === '_type' && compatibleWith7)) return { failure: illegalArgument(`Action/metadata line [${line}] contains an unknown parameter [${key}]`) };
    if ((isJsonObject(value) || Array.isArray(value)) && key !== '_source' && key !== 'dynamic_templates') {
      return { failure: illegalArgument(`Malformed action/metadata line [${line}], expected a simple value for field [${key}] but found [${tokenOf(value)}]`) };
    }
    given[key] = value;
  }
  return { action, meta: given, line };
}

function isAction(name: string): name is ActionHeader['action'] {
  return ACTIONS.includes(name);
}

type EntryResult = { readonly entry: BulkEntry; readonly indexMissing: boolean } | { readonly failure: OperationResult };

function entryOf(
  store: DocumentStore,
  header: ActionHeader,
  source: unknown,
  pathIndex: string | undefined,
  sourceFailure: OperationResult | null,
  urlRouting: string | null,
): EntryResult {
  const { meta } = header;
  const parsed = parseConditions(rawConditionsOfMeta(meta));
  if (!parsed.ok) return { failure: parsed.failure };
  const retries = parseInt32('retry_on_conflict', meta.retry_on_conflict, 0);
  if (!retries.ok) return { failure: retries.failure };
  if (header.action === 'update' && (parsed.value.version !== MATCH_ANY || parsed.value.versionType !== 'internal')) {
    return { failure: illegalArgument('Update requests do not support versioning. Please use `if_seq_no` and `if_primary_term` instead') };
  }
  const target = simpleText(meta._index) ?? pathIndex;
  const explicitId = simpleText(meta._id);
  const action: WriteAction = header.action === 'index' && meta.op_type === 'create' ? 'create' : header.action;
  const writesDocument = action === 'index' || action === 'create';
  const id = explicitId ?? (writesDocument ? autoId() : '');
  const refusedName = dateMathRefusal(target ?? '');
  const index = refusedName === null ? store.writeIndexOf(target ?? '') : (target ?? '');
  const write: DocumentWrite = {
    action,
    target: target ?? '',
    index,
    id,
    body: source,
    update: action === 'update' ? updateSpecOf(source, retries.value) : null,
    conditions: resolveCreateVersion(parsed.value, action),
    routing: refusedName === null ? store.writeRoutingOf(target ?? '', simpleText(meta.routing) ?? urlRouting) : null,
  };
  const itemFailure = refusedName ?? (writesDocument && explicitId === '' ? illegalArgument('if _id is specified it must not be empty') : sourceFailure);
  return { entry: { action, index, id, write, itemFailure }, indexMissing: target === undefined };
}

/** Bulk metadata values are read as text (`parser.text()`): numbers become strings. */
function simpleText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
}

/** The entries that write a document, in order (an item failing before any shard writes nothing). */
export function documentWrites(entries: readonly BulkEntry[]): BulkEntry[] {
  return entries.filter((entry) => entry.itemFailure === null);
}

/**
 * Applies every item in order, in one synchronous step (the bulk's application instant), and
 * answers 200 with one item per action; outcomes are those of `documentWrites(entries)`.
 */
export function runBulk(store: DocumentStore, entries: readonly BulkEntry[]): { response: OperationResult; outcomes: WriteOutcome[] } {
  const started = performance.now();
  const outcomes: WriteOutcome[] = [];
  const items = entries.map((entry) => {
    const response = entry.itemFailure ?? applyAndCollect(store, entry.write, outcomes);
    const item: JsonObject = response.error !== undefined ? { _index: entry.index, _id: entry.id, status: response.status, error: response.error } : { ...response.body, status: response.status };
    return { [entry.action]: item };
  });
  const errors = items.some((item) => Object.values(item).some((entry) => entry.error !== undefined));
  return { response: { status: 200, body: { errors, took: Math.round(performance.now() - started), items } }, outcomes };
}

function applyAndCollect(store: DocumentStore, write: DocumentWrite, outcomes: WriteOutcome[]): OperationResult {
  const applied = applyWrite(store, write);
  outcomes.push(applied.outcome);
  return applied.response;
}

function tokenOf(value: unknown): string {
  if (value === undefined) return 'VALUE_NULL';
  if (Array.isArray(value)) return 'START_ARRAY';
  if (typeof value === 'string') return 'VALUE_STRING';
  if (typeof value === 'number') return 'VALUE_NUMBER';
  if (typeof value === 'boolean') return 'VALUE_BOOLEAN';
  return value === null ? 'VALUE_NULL' : 'START_OBJECT';
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
