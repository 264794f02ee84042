import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/**
 * Shared pieces of the fault tests: a load of concurrent writers that accounts for every request
 * by status, the Elasticsearch error-shape check, log capture, and the summary-line format.
 */

export interface WriteAnswer {
  readonly status: number;
  readonly body: string;
  readonly ms: number;
}

export type Outcome = { readonly kind: 'answered'; readonly answer: WriteAnswer } | { readonly kind: 'unanswered'; readonly error: string };

/** One request with a hard client-side bound, so a hang shows up as "unanswered", never as a stuck test. */
export async function exchange(
  url: string,
  init: { method: string; body?: string; headers?: Record<string, string> },
  timeoutMs = 15_000,
): Promise<Outcome> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: init.method,
      headers: { 'content-type': 'application/json', ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await response.text();
    return { kind: 'answered', answer: { status: response.status, body, ms: performance.now() - started } };
  } catch (error) {
    return { kind: 'unanswered', error: describeFailure(error) };
  }
}

/** fetch hides the socket-level reason in `cause` ("fetch failed" says nothing on its own). */
function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? ` (${'code' in error.cause ? String(error.cause.code) + ' ' : ''}${error.cause.message})` : '';
  return `${error.name}: ${error.message}${cause}`;
}

/** `{"error":{"root_cause":[...],"type":..,"reason":..},"status":N}` with the status it came with. */
export function isElasticsearchError(answer: WriteAnswer, types?: readonly string[]): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return false;
  }
  if (typeof parsed !== 'object' || parsed === null || !('error' in parsed) || !('status' in parsed)) return false;
  const { error, status } = parsed;
  if (status !== answer.status || typeof error !== 'object' || error === null) return false;
  if (!('type' in error) || typeof error.type !== 'string' || !('reason' in error) || !('root_cause' in error)) return false;
  return types === undefined || types.includes(error.type);
}

/** The proxy's two "not now, replay is safe" answers. */
export const RETRYABLE_TYPES = ['lock_wait_timeout_exception', 'lock_service_unavailable_exception'] as const;

/** Counts answers by status; anything outside the allowed set is kept as an example. */
export class Tally {
  readonly byStatus = new Map<number, number>();
  unanswered = 0;
  readonly unexpected: string[] = [];
  readonly unansweredExamples: string[] = [];
  bulkItemErrors = 0;

  get total(): number {
    let sum = this.unanswered;
    for (const count of this.byStatus.values()) sum += count;
    return sum;
  }

  count(status: number): number {
    return this.byStatus.get(status) ?? 0;
  }

  /**
   * Allowed: Elasticsearch's own answers (2xx, 404 for a missing document, 409 for `_create` on
   * an existing one) and 429/503 in Elasticsearch's error shape.
   */
  record(outcome: Outcome, label: string): void {
    if (outcome.kind === 'unanswered') {
      this.unanswered++;
      if (this.unansweredExamples.length < 5) this.unansweredExamples.push(`${label}: ${outcome.error}`);
      return;
    }
    const { answer } = outcome;
    this.byStatus.set(answer.status, this.count(answer.status) + 1);
    const fine =
      (answer.status >= 200 && answer.status < 300) ||
      answer.status === 404 ||
      answer.status === 409 ||
      ((answer.status === 429 || answer.status === 503) && isElasticsearchError(answer, RETRYABLE_TYPES));
    if (!fine && this.unexpected.length < 10) this.unexpected.push(`${label} -> ${answer.status} ${answer.body.slice(0, 300)}`);
    if (answer.status === 200 && answer.body.includes('"errors":true')) this.bulkItemErrors++;
  }

  statuses(): string {
    return [...this.byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}: ${thousands(count)}`)
      .join(', ');
  }
}

/** `4812` -> `4,812`, as the summary lines print counts. */
export function thousands(n: number): string {
  return n.toLocaleString('en-US');
}

export interface WriteSpec {
  readonly method: string;
  readonly path: string;
  readonly body?: string;
  readonly headers?: Record<string, string>;
  readonly label: string;
}

/** A mixed write on `id` (index, update, delete, bulk; foreground and background). */
export function mixedWrite(n: number, index: string, id: string, otherId: string): WriteSpec {
  const encoded = encodeURIComponent(id);
  const priority = { 'X-Lock-Type': n % 3 === 0 ? 'background' : 'foreground' };
  switch (n % 5) {
    case 0:
    case 1:
      return { method: 'PUT', path: `/${index}/_doc/${encoded}`, body: JSON.stringify({ n }), headers: priority, label: `PUT ${id}` };
    case 2:
      return {
        method: 'POST',
        path: `/${index}/_update/${encoded}`,
        body: JSON.stringify({ doc: { n }, doc_as_upsert: true }),
        headers: priority,
        label: `update ${id}`,
      };
    case 3:
      return { method: 'DELETE', path: `/${index}/_doc/${encoded}`, headers: priority, label: `DELETE ${id}` };
    default:
      return {
        method: 'POST',
        path: '/_bulk',
        body: [
          JSON.stringify({ index: { _index: index, _id: id } }),
          JSON.stringify({ n }),
          JSON.stringify({ delete: { _index: index, _id: otherId } }),
        ].join('\n') + '\n',
        headers: { ...priority, 'content-type': 'application/x-ndjson' },
        label: `bulk ${id}+${otherId}`,
      };
  }
}

export interface LoadOptions {
  readonly urls: readonly string[];
  readonly index: string;
  readonly docs: readonly string[];
  readonly writers: number;
  /** Writers stop starting new requests once this resolves true. */
  readonly done: () => boolean;
  readonly tally: Tally;
  readonly requestTimeoutMs?: number;
}

/** `writers` loops, each sending one write at a time to alternating proxies until `done()`. */
export async function runLoad(options: LoadOptions): Promise<void> {
  let n = 0;
  const writer = async (w: number): Promise<void> => {
    while (!options.done()) {
      const i = n++;
      const id = options.docs[i % options.docs.length] ?? 'd0';
      const other = options.docs[(i + 1) % options.docs.length] ?? 'd0';
      const spec = mixedWrite(i, options.index, id, other);
      const base = options.urls[(i + w) % options.urls.length] ?? '';
      const outcome = await exchange(`${base}${spec.path}`, spec, options.requestTimeoutMs);
      options.tally.record(outcome, spec.label);
    }
  };
  await Promise.all(Array.from({ length: options.writers }, (_, w) => writer(w)));
}

export interface CapturedLogs {
  readonly logger: Logger;
  readonly lines: () => readonly Record<string, unknown>[];
}

/** A pino logger at `level` whose JSON lines are kept in memory for assertions. */
export function captureLogs(level: pino.Level = 'info'): CapturedLogs {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        const parsed: unknown = JSON.parse(line);
        if (typeof parsed === 'object' && parsed !== null) lines.push({ ...parsed });
      }
      callback();
    },
  });
  return { logger: pino({ level }, sink), lines: () => lines };
}

/** pino's numeric levels. */
export const LEVEL = { warn: 40, error: 50 } as const;

export async function readyz(adminUrl: string): Promise<number> {
  const outcome = await exchange(`${adminUrl}/readyz`, { method: 'GET' }, 5_000);
  return outcome.kind === 'answered' ? outcome.answer.status : 0;
}

/** Polls until `condition` holds; resolves with the time it took. */
export async function waitUntil(condition: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await condition()) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
