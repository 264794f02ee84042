import { createDeadLetterRecord, type DeadLetterRecord } from '../../../src/deadletter/dead-letter-record.js';
import type { DeadLetterLogger } from '../../../src/deadletter/mirrored-dead-letter-store.js';

/** A dead-letter record for document `id`, created at `at` (distinct, increasing times keep the order obvious). */
export function deadLetterRecord(id: string, at: Date = new Date()): DeadLetterRecord {
  return createDeadLetterRecord(
    {
      method: 'PUT',
      url: `/products/_doc/${encodeURIComponent(id)}?refresh=true`,
      headers: { 'content-type': 'application/json', authorization: 'Basic c2VjcmV0', 'x-opaque-id': ['a', 'b'] },
      body: Buffer.from(JSON.stringify({ id, note: 'é' })),
      priority: 'background',
      keys: [{ index: 'products', id }],
      attemptTimes: [at.getTime() - 10, at.getTime() - 5],
      lastError: { code: 'LOCK_TIMEOUT', message: 'lock wait timed out' },
    },
    at,
  );
}

export interface LoggedLine {
  readonly level: 'warn' | 'error';
  readonly fields: Record<string, unknown>;
  readonly message: string;
}

export function capturingLogger(): DeadLetterLogger & { readonly lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  return {
    lines,
    warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
    error: (fields, message) => lines.push({ level: 'error', fields, message }),
  };
}
