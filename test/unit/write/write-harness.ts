import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { pino } from 'pino';
import { vi } from 'vitest';
import { classifyRoute } from '../../../src/classify/route-parser.js';
import type { Settings } from '../../../src/config/settings.js';
import type { DeadLetterListing, DeadLetterStore } from '../../../src/deadletter/dead-letter-store.js';
import type { DeadLetterRecord } from '../../../src/deadletter/dead-letter-record.js';
import { statusFor } from '../../../src/errors/error-codes.js';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { sendElasticsearchError } from '../../../src/http/elasticsearch-error.js';
import type { ForwardOutcome, ForwardRequest, SpooledForward, UpstreamForwarder, UpstreamResponse } from '../../../src/elasticsearch/upstream-forwarder.js';
import type { InterceptedRequest } from '../../../src/http/write-interceptor.js';
import type { WriteRoute } from '../../../src/write/write-request.js';
import type { LockKey } from '../../../src/lock/lock-engine.js';
import { lockEvents } from '../../../src/lock/lock-events.js';
import { MemoryLockEngine } from '../../../src/lock/memory/memory-lock-engine.js';
import { keyString } from '../../../src/lock/lock-key.js';
import { AliasResolver, type NameAliases } from '../../../src/write/alias-resolver.js';
import { FenceReader } from '../../../src/write/fencing/fence-reader.js';
import type { LockedRequestReport } from '../../../src/write/write-observer.js';
import { createWriteInterceptor } from '../../../src/http/write-edge.js';
import type { WritePathDeps } from '../../../src/write/write-path-deps.js';
import { testSettings, type TestSettingsOverrides } from '../../support/test-settings.js';

/**
 * The write path on the real in-process lock engine, in front of a fake forwarder that records
 * what reached "Elasticsearch" and answers as scripted. No sockets: a client exchange is a plain
 * request object and a response that records what the proxy wrote.
 */

/** What the proxy wrote to the client. */
export class RecordedResponse {
  statusCode = 0;
  /** Lower-case header names. */
  readonly headers: Record<string, string> = {};
  body: Buffer = Buffer.alloc(0);
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  destroyedWith: Error | undefined;
  shouldKeepAlive = true;
  /** The request as a real response links it (the answer's options and coding are read from it). */
  readonly req: { readonly url: string; readonly headers: IncomingHttpHeaders };
  /** Settles when the response is complete or cut. */
  readonly finished: Promise<void>;
  private settle!: () => void;

  constructor(url: string, headers: IncomingHttpHeaders = {}) {
    this.req = { url, headers };
    this.finished = new Promise((resolve) => (this.settle = resolve));
  }

  writeHead(status: number, message?: unknown, headers?: unknown): this {
    if (this.headersSent) throw new Error('writeHead called twice');
    const given = typeof message === 'string' ? headers : message;
    this.statusCode = status;
    if (Array.isArray(given)) {
      for (let i = 0; i + 1 < given.length; i += 2) this.headers[String(given[i]).toLowerCase()] = String(given[i + 1]);
    } else if (typeof given === 'object' && given !== null) {
      for (const [name, value] of Object.entries(given)) this.headers[name.toLowerCase()] = String(value);
    }
    this.headersSent = true;
    return this;
  }

  end(chunk?: Buffer | string): this {
    if (this.writableEnded) throw new Error('end called twice');
    if (chunk !== undefined) this.body = Buffer.from(chunk);
    this.writableEnded = true;
    this.writableFinished = true;
    this.settle();
    return this;
  }

  destroy(error?: Error): this {
    this.destroyed = true;
    this.destroyedWith = error;
    this.settle();
    return this;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON answer, read by tests
  json(): any {
    return JSON.parse(this.body.toString('utf8'));
  }
}

/** What one call of the forwarder did. */
export interface ForwardedCall {
  readonly seq: number;
  readonly via: 'exchange' | 'pipe';
  readonly method: string;
  readonly url: string;
  readonly body: string;
  readonly dropHeaders: readonly string[];
  /** The document keys the request names (`index/id`, as the client wrote the index). */
  readonly keys: readonly string[];
  /** `beforeSend`'s verdict at hand-over (null: vouched for, or no check asked). */
  veto: ProxyError | null;
  readonly checkedAtHandOver: boolean;
  /** True once the request was handed over (bytes reached "Elasticsearch"). */
  sent: boolean;
  /** At hand-over: requestId holding each key of `keys` in the engine (null: nobody). */
  holdersAtSend: Record<string, string | null>;
  answered: boolean;
}

/** How "Elasticsearch" answers a call that reached it. */
export type ScriptedAnswer =
  | { readonly status: number; readonly body?: unknown; readonly headers?: Readonly<Record<string, string>> }
  /** Sent, then the exchange failed (reset, timeout): bytes may have reached Elasticsearch. */
  | { readonly failAfterSend: ProxyError };

export type Responder = (call: ForwardedCall) => ScriptedAnswer | Promise<ScriptedAnswer>;

/** Elasticsearch's answer to a write that succeeds: 201 per document, a bulk with every item created. */
export const ELASTICSEARCH_ACCEPTS: Responder = (call) => {
  const bulk = bulkLines(call.body);
  if (bulk === null) {
    const [, index = '', , id = ''] = call.url.split('?')[0]!.split('/').map(decodeURIComponent);
    return { status: 201, body: { _index: index, _id: id, _version: 1, result: 'created', _shards: { total: 1, successful: 1, failed: 0 } } };
  }
  return {
    status: 200,
    body: {
      took: 3,
      errors: false,
      items: bulk.map(({ action, index, id }) => ({ [action]: { _index: index, _id: id ?? 'generated', _version: 1, result: 'created', status: 201 } })),
    },
  };
};

export class FakeForwarder implements UpstreamForwarder {
  readonly calls: ForwardedCall[] = [];
  respond: Responder = ELASTICSEARCH_ACCEPTS;
  /**
   * Runs after the call is recorded and before hand-over: a connect taking its time. A rejection
   * (UPSTREAM_UNREACHABLE) means the connection was never established: nothing sent.
   */
  connecting: (call: ForwardedCall) => Promise<void> = async () => {};

  constructor(
    private readonly timeline: string[],
    private readonly holderOf: (key: string) => Promise<string | null>,
  ) {}

  async exchange(request: ForwardRequest): Promise<UpstreamResponse> {
    const answer = await this.forward(request, 'exchange');
    if ('failAfterSend' in answer) throw answer.failAfterSend;
    return upstreamResponse(answer);
  }

  async pipe(request: ForwardRequest, res: ServerResponse): Promise<ForwardOutcome> {
    let answer: ScriptedAnswer;
    try {
      answer = await this.forward(request, 'pipe');
    } catch (error) {
      // As the real forwarder: never rejects, answers the failure in Elasticsearch's shape.
      if (!(error instanceof ProxyError)) throw error;
      return answerFailure(res, error, false);
    }
    if ('failAfterSend' in answer) return answerFailure(res, answer.failAfterSend, true);
    const upstream = upstreamResponse(answer);
    res.writeHead(upstream.status, [...upstream.rawHeaders]);
    res.end(upstream.body);
    return { status: upstream.status, reachedUpstream: true, upstreamHost: upstream.upstreamHost, error: null };
  }

  /** The scripted answer is written whole, as `pipe` writes it: delivered once the exchange is over. */
  spool(request: ForwardRequest, res: ServerResponse): SpooledForward {
    const outcome = this.pipe(request, res);
    return { outcome, delivered: outcome.then(() => undefined) };
  }

  async close(): Promise<void> {}

  /** Calls that reached "Elasticsearch". */
  get sent(): ForwardedCall[] {
    return this.calls.filter((call) => call.sent);
  }

  private async forward(request: ForwardRequest, via: 'exchange' | 'pipe'): Promise<ScriptedAnswer> {
    if (!Buffer.isBuffer(request.body)) throw new Error('fake forwarder: a locked write must carry its body');
    const body = request.body.toString('utf8');
    const call: ForwardedCall = {
      seq: this.calls.length + 1,
      via,
      method: request.method,
      url: request.url,
      body,
      dropHeaders: request.dropHeaders ?? [],
      keys: keysOf(request.url, body),
      veto: null,
      checkedAtHandOver: request.beforeSend !== undefined,
      sent: false,
      holdersAtSend: {},
      answered: false,
    };
    this.calls.push(call);
    await this.connecting(call);
    // Hand-over: the veto is asked synchronously, right before the first byte.
    call.veto = request.beforeSend?.() ?? null;
    if (call.veto !== null) throw call.veto;
    call.sent = true;
    this.timeline.push(`send#${call.seq} ${call.keys.join(' ')}`);
    for (const key of call.keys) call.holdersAtSend[key] = await this.holderOf(key);
    const scripted = await this.respond(call);
    call.answered = true;
    this.timeline.push(`answer#${call.seq}`);
    return scripted;
  }
}

function upstreamResponse(answer: { status: number; body?: unknown; headers?: Readonly<Record<string, string>> }): UpstreamResponse {
  const body = Buffer.from(answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
  const headers: Record<string, string> = {
    'X-elastic-product': 'Elasticsearch',
    'content-type': 'application/json',
    'content-length': String(body.length),
    ...answer.headers,
  };
  return {
    status: answer.status,
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])) as IncomingHttpHeaders,
    rawHeaders: Object.entries(headers).flat(),
    body,
    upstreamHost: 'fake:9200',
  };
}

/** As the real forwarder: an upstream failure answered in Elasticsearch's shape. */
function answerFailure(res: ServerResponse, error: ProxyError, reachedUpstream: boolean): ForwardOutcome {
  sendElasticsearchError(res, error);
  return { status: statusFor(error.code), reachedUpstream, upstreamHost: null, error };
}

/** The action lines of an NDJSON bulk body, or null when the body is not one. */
export function bulkLines(body: string): { action: string; index: string; id: string | null }[] | null {
  const lines = body.split('\n').filter((line) => line.trim() !== '');
  const items: { action: string; index: string; id: string | null }[] = [];
  for (let i = 0; i < lines.length; i++) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(lines[i]!);
    } catch {
      return null;
    }
    const [action] = Object.keys(parsed as object);
    if (action === undefined || !['index', 'create', 'update', 'delete'].includes(action)) return items.length === 0 ? null : items;
    const meta = (parsed as Record<string, { _index?: string; _id?: string }>)[action]!;
    items.push({ action, index: meta._index ?? '', id: meta._id ?? null });
    if (action !== 'delete') i++;
  }
  return items.length === 0 ? null : items;
}

/** `index/id` of every document a forwarded request names (bulk: items with an id). */
function keysOf(url: string, body: string): string[] {
  const bulk = bulkLines(body);
  if (bulk !== null) return [...new Set(bulk.filter((item) => item.id !== null).map((item) => `${item.index}/${item.id}`))];
  const [, index, , id] = url.split('?')[0]!.split('/').map(decodeURIComponent);
  return index !== undefined && id !== undefined ? [`${index}/${id}`] : [];
}

export class RecordingDeadLetters implements DeadLetterStore {
  readonly records: DeadLetterRecord[] = [];
  failing = false;

  async append(record: DeadLetterRecord): Promise<void> {
    if (this.failing) throw new Error('disk full');
    this.records.push(record);
  }

  async list(): Promise<DeadLetterListing> {
    throw new Error('not used by the write path');
  }

  async get(id: string): Promise<DeadLetterRecord | null> {
    return this.records.find((record) => record.id === id) ?? null;
  }

  async markReplayed(): Promise<boolean> {
    throw new Error('not used by the write path');
  }
}

export interface ClientWrite {
  readonly exchange: InterceptedRequest;
  readonly res: RecordedResponse;
  /** The write path's promise for this request. */
  readonly done: Promise<void>;
  /** The client closes its connection. */
  hangUp(): void;
}

export interface WriteOptions {
  readonly body?: string | object;
  /** Extra request headers (the lock header among them). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly priority?: 'foreground' | 'background';
}

export interface WritePathHarness {
  /** What the write path is built from (to call `createWritePath` without the edge). */
  readonly deps: WritePathDeps;
  readonly engine: MemoryLockEngine;
  readonly forwarder: FakeForwarder;
  readonly deadLetters: RecordingDeadLetters;
  readonly reports: LockedRequestReport[];
  /** Engine grants and releases, forwarder sends and answers, in the order they happened. */
  readonly timeline: string[];
  /** Alias look-ups answer from here (absent name: a plain index). */
  readonly aliases: Map<string, NameAliases | Error>;
  readonly aliasLookups: string[];
  /** Starts a client write through the write path (`createWriteInterceptor`). */
  start(method: string, url: string, options?: WriteOptions): ClientWrite;
  /** A client write, awaited to its end. */
  write(method: string, url: string, options?: WriteOptions): Promise<RecordedResponse>;
  /** Takes a document's lock as another writer would, until released. */
  block(index: string, id: string): Promise<{ release(): Promise<void> }>;
  /** The requestId holding `key` (null: free). */
  holderOf(index: string, id: string): Promise<string | null>;
  queueLength(index: string, id: string): Promise<number>;
}

let requestCounter = 0;

/** `wallClock`: the clock date-math index names are evaluated on (ms since the epoch). */
export function startWritePath(overrides: TestSettingsOverrides = {}, options: { readonly wallClock?: () => number } = {}): WritePathHarness {
  const timeline: string[] = [];
  const engine = new MemoryLockEngine({
    events: lockEvents({
      granted: ({ key }) => timeline.push(`grant ${keyString(key)}`),
      released: ({ key }) => timeline.push(`release ${keyString(key)}`),
    }),
  });
  const holder = async (key: LockKey): Promise<string | null> => (await engine.inspect(key)).holder?.owner.requestId ?? null;
  const forwarder = new FakeForwarder(timeline, (key) => {
    const slash = key.indexOf('/');
    return holder({ index: key.slice(0, slash), id: key.slice(slash + 1) });
  });
  const deadLetters = new RecordingDeadLetters();
  const reports: LockedRequestReport[] = [];
  const aliases = new Map<string, NameAliases | Error>();
  const aliasLookups: string[] = [];
  const settings: Settings = testSettings({
    ...overrides,
    lock: { foregroundTimeoutMs: 5_000, backgroundTimeoutMs: 5_000, ...overrides.lock },
    elasticsearch: { requestRetryCount: 0, ...overrides.elasticsearch },
  });
  const deps: WritePathDeps = {
    settings: () => settings,
    locks: engine,
    forwarder,
    aliases: new AliasResolver({
      lookup: async (name) => {
        aliasLookups.push(name);
        const known = aliases.get(name);
        if (known instanceof Error) throw known;
        return known ?? { isAlias: false, writeAliases: [], writeIndex: name };
      },
      ttlMs: () => 60_000,
      capacity: 100,
      concurrency: 4,
      ...(options.wallClock === undefined ? {} : { wallClock: options.wallClock }),
    }),
    // Fencing is off in these settings: the reader is never asked (test/unit/write/fencing covers it).
    fenceReader: new FenceReader(forwarder, null),
    deadLetters,
    observer: { lockedRequest: (report) => reports.push(report), fencedWrite: () => undefined },
    logger: pino({ level: 'silent' }),
  };
  const intercept = createWriteInterceptor(deps);

  const start = (method: string, url: string, options: WriteOptions = {}): ClientWrite => {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
    if (options.priority !== undefined) headers[settings.proxy.lockHeader.toLowerCase()] = options.priority;
    const lowerHeaders: IncomingHttpHeaders = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
    const body = Buffer.from(options.body === undefined ? '' : typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    const req = { method, url, headers: lowerHeaders, rawHeaders: Object.entries(headers).flat() } as unknown as IncomingMessage;
    const res = new RecordedResponse(url, lowerHeaders);
    const gone = new AbortController();
    const route = classifyRoute(method, url, lowerHeaders);
    if (route.kind === 'passthrough') throw new Error(`${method} ${url} is not a write`);
    const exchange: InterceptedRequest = {
      req,
      res: res as unknown as ServerResponse,
      route: route as WriteRoute,
      body,
      bodyStreams: false,
      inflatedFrom: null,
      requestId: `req-${++requestCounter}`,
      clientGone: gone.signal,
      streamAnswer: (request) => forwarder.pipe(request, res as unknown as ServerResponse),
    };
    const done = intercept(exchange);
    return { exchange, res, done, hangUp: () => gone.abort(new Error('client closed the connection')) };
  };

  return {
    deps,
    engine,
    forwarder,
    deadLetters,
    reports,
    timeline,
    aliases,
    aliasLookups,
    start,
    async write(method, url, options) {
      const write = start(method, url, options);
      await write.done;
      return write.res;
    },
    async block(index, id) {
      return engine.acquire({ index, id }, 'foreground', { timeoutMs: 1_000, owner: { host: 'test', pid: 0, requestId: 'blocker' } });
    },
    holderOf: (index, id) => holder({ index, id }),
    async queueLength(index, id) {
      return (await engine.inspect({ index, id })).queue.length;
    },
  };
}

/** A promise the test settles: an answer, a connect, that takes as long as the test wants. */
export function gate<T>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** `vi.waitFor` polling often: the states waited for come within a few event-loop turns. */
export function until<T>(check: () => T | Promise<T>): Promise<T> {
  return vi.waitFor(check, { timeout: 2_000, interval: 2 });
}

/** NDJSON of the given lines, each ending in `\n`. */
export function ndjson(lines: readonly object[]): string {
  return lines.map((line) => `${JSON.stringify(line)}\n`).join('');
}

/** A bulk body indexing `{ n }` into each `[index, id]`. */
export function bulkOf(documents: readonly (readonly [string, string])[]): string {
  return ndjson(documents.flatMap(([index, id], n) => [{ index: { _index: index, _id: id } }, { n }]));
}

export const NDJSON = { 'content-type': 'application/x-ndjson' };

/** Nothing held, nothing waiting: every lock a request took is back (a bulk's right after the turn its answer went out in). */
export async function expectNoLocksLeft(harness: WritePathHarness): Promise<void> {
  await until(() => {
    const { held, waiting } = harness.engine.activity();
    if (held !== 0 || waiting !== 0) throw new Error(`locks left behind: ${held} held, ${waiting} waiting`);
  });
}
