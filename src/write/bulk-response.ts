import { ProxyError } from '../errors/proxy-error.js';
import type { BulkItemResult } from './bulk-items.js';

export interface ParsedBulkResponse {
  readonly took: number;
  readonly errors: boolean;
  readonly items: readonly BulkItemResult[];
}

/** Parses an upstream `_bulk` answer; an answer we cannot read is an upstream fault (502). */
export function parseBulkResponse(body: Buffer, expectedItems: number): ParsedBulkResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new ProxyError('UPSTREAM_RESET', 'Elasticsearch answered a _bulk request with a body that is not JSON', { cause: error });
  }
  if (!isRecord(parsed) || !Array.isArray(parsed.items) || parsed.items.length !== expectedItems) {
    throw new ProxyError('UPSTREAM_RESET', `Elasticsearch answered a _bulk request of ${expectedItems} items with an unexpected body`);
  }
  const items = parsed.items.filter(isItemResult);
  if (items.length !== expectedItems) {
    throw new ProxyError('UPSTREAM_RESET', 'Elasticsearch answered a _bulk request with malformed items');
  }
  return { took: typeof parsed.took === 'number' ? parsed.took : 0, errors: parsed.errors === true, items };
}

/** Builds the merged answer; `errors` is true when any item failed, as Elasticsearch sets it. */
export function renderBulkResponse(took: number, items: readonly BulkItemResult[]): Buffer {
  const errors = items.some((item) => Object.values(item).some((result) => 'error' in result));
  return Buffer.from(JSON.stringify({ took, errors, items }));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isItemResult(value: unknown): value is BulkItemResult {
  if (!isRecord(value)) return false;
  const results = Object.values(value);
  return results.length === 1 && isRecord(results[0]);
}
