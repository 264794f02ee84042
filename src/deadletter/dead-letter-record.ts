import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import type { LockKey, Priority } from '../lock/lock-engine.js';
import { newDeadLetterId } from './dead-letter-id.js';
import { HOP_BY_HOP_HEADERS } from '../elasticsearch/hop-by-hop.js';

export type DeadLetterHeaders = Readonly<Record<string, string | readonly string[]>>;

export interface DeadLetterBody {
  /** `utf8` when the bytes are valid UTF-8 (readable in the file), else `base64`. */
  readonly encoding: 'utf8' | 'base64';
  readonly data: string;
}

/** A write the proxy gave up on, kept so an operator can inspect and replay it. */
export interface DeadLetterRecord {
  /** Sortable (creation time first) and unique across processes. */
  readonly id: string;
  /** ISO-8601 UTC. */
  readonly createdAt: string;
  readonly method: string;
  /** Raw path, as received (still percent-encoded). */
  readonly path: string;
  /** Raw query string without `?`, `''` when there was none. */
  readonly query: string;
  /** Request headers minus credentials and hop-by-hop headers. */
  readonly headers: DeadLetterHeaders;
  /** True when credentials were removed: a replay must supply its own. */
  readonly hadCredentials: boolean;
  readonly body: DeadLetterBody;
  readonly priority: Priority;
  readonly keys: readonly LockKey[];
  readonly attempts: number;
  /** ISO-8601 UTC time of each attempt, oldest first. */
  readonly attemptedAt: readonly string[];
  readonly lastError: { readonly code: string; readonly message: string };
  /** Set once replayed (`markReplayed`); `null` until then. */
  readonly replayedAt: string | null;
  readonly replayStatus: string | null;
}

export interface DeadLetterInput {
  readonly method: string;
  /** Path and query as received (`req.url`). */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly priority: Priority;
  readonly keys: readonly LockKey[];
  /** Epoch ms of each attempt, oldest first. */
  readonly attemptTimes: readonly number[];
  readonly lastError: { readonly code: string; readonly message: string };
}

/** Headers that carry credentials: never written to disk or to a shared index. */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'es-client-authentication',
  'x-amz-security-token',
]);

/** Whether a header of this name carries credentials (the ones a record never keeps). */
export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADERS.has(name.toLowerCase());
}

/** Per-connection headers, and the host and length a replay's own connection sets. */
const NOT_KEPT_FOR_REPLAY: ReadonlySet<string> = new Set([...HOP_BY_HOP_HEADERS, 'host', 'content-length']);

export function createDeadLetterRecord(input: DeadLetterInput, now: Date = new Date()): DeadLetterRecord {
  const queryStart = input.url.indexOf('?');
  const { headers, hadCredentials } = redactHeaders(input.headers);
  return {
    id: newDeadLetterId(now.getTime()),
    createdAt: now.toISOString(),
    method: input.method,
    path: queryStart < 0 ? input.url : input.url.slice(0, queryStart),
    query: queryStart < 0 ? '' : input.url.slice(queryStart + 1),
    headers,
    hadCredentials,
    body: encodeBody(input.body),
    priority: input.priority,
    keys: input.keys.map(({ index, id }) => ({ index, id })),
    attempts: input.attemptTimes.length,
    attemptedAt: input.attemptTimes.map((time) => new Date(time).toISOString()),
    lastError: { code: input.lastError.code, message: input.lastError.message },
    replayedAt: null,
    replayStatus: null,
  };
}

export function redactHeaders(headers: IncomingHttpHeaders): { headers: DeadLetterHeaders; hadCredentials: boolean } {
  const kept: Record<string, string | readonly string[]> = {};
  let hadCredentials = false;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || NOT_KEPT_FOR_REPLAY.has(lower)) continue;
    if (CREDENTIAL_HEADERS.has(lower)) {
      hadCredentials = true;
      continue;
    }
    kept[lower] = value;
  }
  return { headers: kept, hadCredentials };
}

export function encodeBody(body: Buffer): DeadLetterBody {
  return isUtf8(body) ? { encoding: 'utf8', data: body.toString('utf8') } : { encoding: 'base64', data: body.toString('base64') };
}

export function decodeDeadLetterBody(body: DeadLetterBody): Buffer {
  return Buffer.from(body.data, body.encoding);
}
