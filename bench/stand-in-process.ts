/**
 * The Elasticsearch stand-in in its own process for `npm run bench`. Argument: JSON
 * `{ writeMs, readMs, bulkDocMs, security? }` (`security: true`: security on with the users of
 * `BENCH_SECURITY`: every request but the bench routes then needs credentials). Prints `{"port":N}` once it listens. Bench-only routes:
 * `GET /_bench/overlaps` (overlap count since the last reset) and `POST /_bench/reset`
 * (clears the request log and the overlap counters; call it between runs, when nothing is in flight).
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startEsStandIn, type StandInRequest } from '../test/support/es-stand-in.js';
import { numberField } from './child-process.js';
import { BENCH_SECURITY } from './bench-security.js';

const options: unknown = JSON.parse(process.argv[2] ?? '{}');
const bulkDocMs = numberField(options, 'bulkDocMs');
const securityOn = typeof options === 'object' && options !== null && Reflect.get(options, 'security') === true;
const standIn = await startEsStandIn({
  writeLatencyMs: numberField(options, 'writeMs'),
  readLatencyMs: numberField(options, 'readMs'),
  ...(securityOn ? { security: BENCH_SECURITY } : {}),
});

function reply(res: ServerResponse, body: unknown): true {
  res.writeHead(200, { 'content-type': 'application/json', 'X-elastic-product': 'Elasticsearch' });
  res.end(JSON.stringify(body));
  return true;
}

/** Bulk lines are action/source pairs (the bench sends only `index` actions). */
function bulkDocuments(request: StandInRequest): number {
  let lines = 0;
  for (const byte of request.body) if (byte === 0x0a) lines++;
  return Math.floor(lines / 2);
}

/** Overlaps counted before the log was last trimmed (trimming resets the stand-in's counters). */
const folded = { overlaps: 0, maxConcurrentPerDocument: 0 };

function foldAndTrim(): void {
  folded.overlaps += standIn.overlaps.count;
  folded.maxConcurrentPerDocument = Math.max(folded.maxConcurrentPerDocument, standIn.maxConcurrentPerDocument);
  standIn.resetLog();
}

standIn.onRequest(async (request, res) => {
  const [first, second] = request.segments;
  if (first === '_bench' && second === 'overlaps') {
    return reply(res, {
      overlaps: folded.overlaps + standIn.overlaps.count,
      maxConcurrentPerDocument: Math.max(folded.maxConcurrentPerDocument, standIn.maxConcurrentPerDocument),
      writesInFlight: standIn.writesInFlight,
      refusedWrites: standIn.security?.refusedWrites ?? 0,
    });
  }
  if (first === '_bench' && second === 'reset') {
    foldAndTrim();
    folded.overlaps = 0;
    folded.maxConcurrentPerDocument = 0;
    return reply(res, { reset: true });
  }
  // A real cluster's bulk costs per document; the flat write latency alone would flatter a proxy that adds per-document work.
  if ((first === '_bulk' || second === '_bulk') && bulkDocMs > 0) await sleep(bulkDocMs * bulkDocuments(request));
  return false;
});

/**
 * The bench never reads back what it writes, and its streams name fresh documents (millions in a
 * run): a store that kept them all grew the stand-in past 2 GB, and its garbage collections became
 * pauses in whichever way's slice they fell. An index past this many documents is
 * emptied; `write-uncontended`'s 100,000 ids stay.
 */
const DOCUMENTS_KEPT_PER_INDEX = 100_000;

// The request log and the write histories serve tests and hold every body; a benchmark would grow
// them by its whole traffic. Resetting keeps the detector's in-flight map, so trimming mid-run loses no overlap.
setInterval(() => {
  foldAndTrim();
  standIn.forgetDocumentsBeyond(DOCUMENTS_KEPT_PER_INDEX);
}, 500).unref();

process.on('SIGTERM', () => {
  void standIn.stop().then(() => process.exit(0));
});
console.log(JSON.stringify({ port: standIn.port }));
