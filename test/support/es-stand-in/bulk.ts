import { randomBytes } from 'node:crypto';
import { DocumentStore, failure, isJsonObject, type JsonObject, type OperationResult } from './document-store.js';

type BulkAction = 'index' | 'create' | 'update' | 'delete';

export interface BulkItem {
  readonly action: BulkAction;
  /** Index or alias as written by the client (or the path's). */
  readonly target: string;
  readonly id: string;
  readonly autoId: boolean;
  readonly meta: JsonObject;
  readonly source: unknown;
}

const ACTIONS: readonly BulkAction[] = ['index', 'create', 'update', 'delete'];

function isBulkAction(name: string | undefined): name is BulkAction {
  return ACTIONS.some((action) => action === name);
}

/** Parses NDJSON bulk bodies; an unusable line fails the whole request, as in Elasticsearch. */
export function parseBulk(body: Buffer, pathIndex: string | undefined): BulkItem[] | OperationResult {
  const lines = body.toString('utf8').split('\n').map((line) => line.replace(/\r$/, ''));
  const items: BulkItem[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    if (line.trim() === '') continue;
    const parsed = parseLine(line);
    const action = isJsonObject(parsed) ? Object.keys(parsed)[0] : undefined;
    if (!isJsonObject(parsed) || !isBulkAction(action)) {
      return failure(400, 'illegal_argument_exception', `Malformed action/metadata line [${i + 1}], expected an action`);
    }
    const meta = parsed[action];
    if (!isJsonObject(meta)) return failure(400, 'illegal_argument_exception', `Malformed action/metadata line [${i + 1}]`);
    const target = typeof meta._index === 'string' ? meta._index : pathIndex;
    if (target === undefined) return failure(400, 'action_request_validation_exception', `Validation Failed: 1: index is missing;`);
    let source: unknown = null;
    if (action !== 'delete') {
      i += 1;
      source = parseLine(lines[i] ?? '');
      if (source === undefined) return failure(400, 'x_content_parse_exception', `Malformed source line [${i + 1}]`);
    }
    const explicitId = typeof meta._id === 'string' ? meta._id : null;
    if (explicitId === null && (action === 'update' || action === 'delete')) {
      return failure(400, 'action_request_validation_exception', `Validation Failed: 1: id is missing;`);
    }
    items.push({
      action,
      target,
      id: explicitId ?? randomBytes(10).toString('base64url'),
      autoId: explicitId === null,
      meta,
      source,
    });
  }
  return items;
}

export function runBulkItem(store: DocumentStore, item: BulkItem): JsonObject {
  const result = applyItem(store, item);
  const index = store.writeIndexOf(item.target);
  const entry: JsonObject =
    result.error !== undefined ? { _index: index, _id: item.id, status: result.status, error: result.error } : { ...result.body, status: result.status };
  return { [item.action]: entry };
}

function applyItem(store: DocumentStore, item: BulkItem): OperationResult {
  const conditions = {
    ...(typeof item.meta.if_seq_no === 'number' ? { ifSeqNo: item.meta.if_seq_no } : {}),
    ...(typeof item.meta.if_primary_term === 'number' ? { ifPrimaryTerm: item.meta.if_primary_term } : {}),
  };
  switch (item.action) {
    case 'index':
      return store.indexDocument(item.target, item.id, item.source, item.meta.op_type === 'create' ? 'create' : 'index', conditions);
    case 'create':
      return store.indexDocument(item.target, item.id, item.source, 'create', conditions);
    case 'update':
      return store.updateDocument(item.target, item.id, item.source);
    case 'delete':
      return store.deleteDocument(item.target, item.id, conditions);
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
