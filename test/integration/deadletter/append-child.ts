/**
 * A process that appends dead letters to `<dir>`, one per body size given, and says on stdout what
 * happened to each, as one JSON line BEFORE (`appending`, with the line's size in bytes) and AFTER
 * (`acked`, or `failed` with the error code) the append. Stdout is a pipe, written synchronously on
 * Linux: a line printed is a line the parent can read even if this process is killed right after.
 *
 *   node --import tsx append-child.ts <dir> <bodyBytes> [<bodyBytes> ...]
 */
import { createDeadLetterRecord } from '../../../src/deadletter/dead-letter-record.js';
import { serializeDeadLetterLine } from '../../../src/deadletter/dead-letter-line.js';
import { FileDeadLetterStore } from '../../../src/deadletter/file-dead-letter-store.js';

/** One day file (dead-letter-2026-11-21.jsonl) for every record, whatever the clock says. */
const CHILD_RECORD_TIME = new Date('2026-11-21T10:00:00.000Z');

const [dir, ...sizes] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: append-child.ts <dir> <bodyBytes>...');
const store = new FileDeadLetterStore(dir);
const say = (fields: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(fields)}\n`);
};

for (const size of sizes) {
  const record = createDeadLetterRecord(
    {
      method: 'PUT',
      url: '/products/_doc/child',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(`{"pad":"${'x'.repeat(Number(size))}"}`),
      priority: 'background',
      keys: [{ index: 'products', id: 'child' }],
      attemptTimes: [CHILD_RECORD_TIME.getTime()],
      lastError: { code: 'LOCK_TIMEOUT', message: 'lock wait timed out' },
    },
    CHILD_RECORD_TIME,
  );
  say({ appending: record.id, lineBytes: Buffer.byteLength(serializeDeadLetterLine({ type: 'record', record })) });
  try {
    await store.append(record);
    say({ acked: record.id });
  } catch (error) {
    say({ failed: record.id, code: error instanceof Error && 'code' in error ? String(error.code) : String(error) });
  }
}
