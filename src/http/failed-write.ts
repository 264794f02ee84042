import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AnswerNotes } from '../write/write-outcome.js';
import { answerUnlessComplete, asProxyError } from './elasticsearch-error.js';

/**
 * The headers a write's answer carries beside its body: the request id on every answer the proxy
 * composes, and what the write path noted (when to retry, the dead letter that keeps the write).
 */
export function writeAnswerHeaders(requestId: string, notes: AnswerNotes): Record<string, string> {
  const headers: Record<string, string> = { 'X-Request-Id': requestId };
  if (notes.retryAfterSeconds !== undefined) headers['Retry-After'] = String(notes.retryAfterSeconds);
  if (notes.deadLetterId !== undefined) headers['X-Dead-Letter-Id'] = notes.deadLetterId;
  return headers;
}

/**
 * The one answer to a write that failed with an exception, wherever it is caught: logged once
 * ("write path failed", for faults of the proxy itself; a client's mistake is not one), answered in
 * Elasticsearch's error shape with the request id. A response already complete is left alone (the
 * client may be reusing the connection); one that had started is cut, as there is no honest way to
 * report an error in the middle of it.
 */
export function answerFailedWrite(logger: Logger, res: ServerResponse, error: unknown, requestId: string): void {
  const proxyError = asProxyError(error);
  if (proxyError.code === 'INTERNAL') logger.error({ err: error, requestId }, 'write path failed');
  answerUnlessComplete(res, proxyError, writeAnswerHeaders(requestId, {}));
}
