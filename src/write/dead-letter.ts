import type { IncomingHttpHeaders } from 'node:http';
import { createDeadLetterRecord } from '../deadletter/dead-letter-record.js';
import type { WriteRequest } from './write-request.js';
import type { LockKey, Priority } from '../lock/lock-engine.js';
import type { WritePathDeps } from './write-path-deps.js';

export interface GivenUpWrite {
  /** The bytes to replay: the whole body, or the sub-bulk of the items that were not written. */
  readonly body: Buffer;
  readonly priority: Priority;
  readonly keys: readonly LockKey[];
  /** Epoch ms of each lock attempt, oldest first. */
  readonly attemptTimes: readonly number[];
  readonly lastError: { readonly code: string; readonly message: string };
}

/** What the dead-letter record takes from the client's request. */
export type DeadLetterSource = Pick<WriteRequest, 'req' | 'inflatedFrom' | 'requestId'>;

/**
 * Durably records a write the proxy gave up on; resolves to the record id for `X-Dead-Letter-Id`,
 * or null when the queue could not be written. The client still gets its 429 then (a 5xx would
 * misreport a bulk whose other items were written); the loss is logged at error with the keys.
 */
export async function deadLetter(deps: WritePathDeps, exchange: DeadLetterSource, write: GivenUpWrite): Promise<string | null> {
  const record = createDeadLetterRecord({
    method: exchange.req.method ?? 'POST',
    url: exchange.req.url ?? '/',
    // The record keeps the inflated content, readable in the file: its replay goes uncompressed.
    headers: exchange.inflatedFrom === null ? exchange.req.headers : withoutContentEncoding(exchange.req.headers),
    ...write,
  });
  try {
    await deps.deadLetters.append(record);
  } catch (error) {
    deps.logger.error(
      { err: error, requestId: exchange.requestId, keys: record.keys.slice(0, 10), attempts: record.attempts },
      'dead-letter queue write failed: the write was answered 429 but is not recorded for replay',
    );
    return null;
  }
  deps.logger.warn(
    { requestId: exchange.requestId, deadLetterId: record.id, keys: record.keys.slice(0, 10), attempts: record.attempts },
    'write dead-lettered after its lock retries were exhausted',
  );
  return record.id;
}

function withoutContentEncoding(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { 'content-encoding': _dropped, ...rest } = headers;
  return rest;
}
