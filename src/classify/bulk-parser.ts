import { ProxyError } from '../errors/proxy-error.js';
import { parseActionLine, type BulkAction } from './bulk-action-line.js';

export type { BulkAction } from './bulk-action-line.js';

/**
 * One action of a `_bulk` body. Offsets are byte offsets into the body; each `...End` is the offset
 * of the `\n` that ends the line (so a line's bytes are `start..end`, its `\r` if any included).
 */
export interface BulkItem {
  /** Index of the item in request order (0-based): the position of its entry in the response `items`. */
  readonly position: number;
  readonly action: BulkAction;
  /** `_index` of the line, else the path's index. */
  readonly index: string;
  /** `null` for index/create without `_id` (auto-generated, cannot collide); as written, see `document-id.ts` for the document it names. */
  readonly id: string | null;
  /** 1-based line number of the action line, counting blank lines, as in Elasticsearch's messages. */
  readonly line: number;
  readonly actionLineStart: number;
  readonly actionLineEnd: number;
  readonly sourceLineStart: number | null;
  readonly sourceLineEnd: number | null;
}

export interface BulkParseOptions {
  /** Accept `_type` metadata (a compatible-with=7 request, `RouteClassification.typed`). Default false. */
  readonly allowTypeMetadata?: boolean;
}

const NEWLINE = 0x0a;

/**
 * Parses a `_bulk` NDJSON body into its items, without copying or parsing source lines.
 *
 * Follows Elasticsearch's `BulkRequestParser`: lines split on `\n` (a `\r` before it is whitespace),
 * blank action lines skipped, `index`/`create`/`update` take the next line (whatever it holds) as
 * their source, `delete` takes none, the body must end with `\n`. Action lines are checked as
 * strictly as Elasticsearch 9 does; any violation is a ProxyError BAD_BULK_BODY (400) naming the line.
 *
 * Source lines are not parsed: Elasticsearch reads index/create sources lazily (a bad one fails
 * only its item) and update bodies eagerly (a bad one fails the whole request) — either way nothing
 * is written unlocked, so the proxy forwards them and lets Elasticsearch answer.
 *
 * Whole-request validation errors Elasticsearch raises before executing anything are raised here
 * too: an item with no index at all, a delete/update without `_id`, and a body without any action.
 */
export function parseBulkBody(body: Buffer, defaultIndex: string | null, options: BulkParseOptions = {}): BulkItem[] {
  if (body.length === 0) throw badBulk('request body is required');
  const actionOptions = { allowTypeMetadata: options.allowTypeMetadata ?? false };
  const items: BulkItem[] = [];
  let line = 0;
  let from = 0;
  for (;;) {
    const actionEnd = nextNewline(body, from);
    if (actionEnd < 0) break;
    line++;
    const parsed = parseActionLine(body, from, actionEnd, line, actionOptions);
    const actionStart = from;
    from = actionEnd + 1;
    if (parsed === null) continue;
    const index = parsed.index ?? defaultIndex;
    if (index === null) throw validationFailed('index is missing', line);
    if ((parsed.action === 'delete' || parsed.action === 'update') && (parsed.id === null || parsed.id === '')) {
      throw validationFailed('id is missing', line);
    }
    let sourceStart: number | null = null;
    let sourceEnd: number | null = null;
    if (parsed.action !== 'delete') {
      sourceEnd = nextNewline(body, from);
      if (sourceEnd < 0) throw badBulk(`action/metadata line [${line}] (${parsed.action}) must be followed by a source line`, line);
      sourceStart = from;
      from = sourceEnd + 1;
    }
    // One literal with every field: spreading a base object costs more than the whole parse.
    items.push({
      position: items.length,
      action: parsed.action,
      index,
      id: parsed.id,
      line,
      actionLineStart: actionStart,
      actionLineEnd: actionEnd,
      sourceLineStart: sourceStart,
      sourceLineEnd: sourceEnd,
    });
    if (sourceStart !== null) line++;
  }
  if (items.length === 0) throw badBulk('Validation Failed: 1: no requests added;');
  return items;
}

/**
 * A body holding only the given items' lines, byte for byte, each line still ending in its `\n`
 * (items in the order given; pass them in request order to keep response positions meaningful).
 */
export function sliceBulkBody(body: Buffer, items: readonly BulkItem[]): Buffer {
  const ranges = lineRanges(items);
  let length = 0;
  for (const [start, end] of ranges) length += end - start;
  const slice = Buffer.allocUnsafe(length);
  let offset = 0;
  for (const [start, end] of ranges) offset += body.copy(slice, offset, start, end);
  return slice;
}

/** The items' lines as `[start, end)` byte ranges, newline included, adjacent ranges merged into one copy. */
function lineRanges(items: readonly BulkItem[]): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  const add = (start: number, end: number): void => {
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last[1] === start) last[1] = end;
    else ranges.push([start, end]);
  };
  for (const item of items) {
    add(item.actionLineStart, item.actionLineEnd + 1);
    if (item.sourceLineStart !== null && item.sourceLineEnd !== null) add(item.sourceLineStart, item.sourceLineEnd + 1);
  }
  return ranges;
}

function nextNewline(body: Buffer, from: number): number {
  const found = body.indexOf(NEWLINE, from);
  if (found < 0 && from !== body.length) throw badBulk('The bulk request must be terminated by a newline [\\n]');
  return found;
}

function validationFailed(problem: string, line: number): ProxyError {
  return badBulk(`Validation Failed: 1: ${problem} (action/metadata line [${line}]);`, line);
}

function badBulk(message: string, line?: number): ProxyError {
  return new ProxyError('BAD_BULK_BODY', message, { meta: line === undefined ? {} : { line } });
}
