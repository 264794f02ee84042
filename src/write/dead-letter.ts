import { createDeadLetterRecord } from '../deadletter/dead-letter-record.js';
import type { InterceptedRequest as ClientExchange } from '../http/write-interceptor.js';
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

/** Durably records a write the proxy gave up on; resolves to the record id for `X-Dead-Letter-Id`. */
export async function deadLetter(deps: WritePathDeps, exchange: ClientExchange, write: GivenUpWrite): Promise<string> {
  const record = createDeadLetterRecord({
    method: exchange.req.method ?? 'POST',
    url: exchange.req.url ?? '/',
    headers: exchange.req.headers,
    ...write,
  });
  await deps.deadLetters.append(record);
  deps.logger.warn(
    { requestId: exchange.requestId, deadLetterId: record.id, keys: record.keys.slice(0, 10), attempts: record.attempts },
    'write dead-lettered after its lock retries were exhausted',
  );
  return record.id;
}
