import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Pool } from 'undici';
import { statusFor } from '../../errors/error-codes.js';
import type { ProxyError } from '../../errors/proxy-error.js';
import { sendElasticsearchError } from '../../http/elasticsearch-error.js';
import type { ForwardOutcome, ForwardRequest, SpooledForward, UpstreamForwarder, UpstreamResponse } from '../upstream-forwarder.js';
import { bufferSink, relaySink, type AnswerSink } from './answer-sink.js';
import { withArrivedBody } from './arrived-body.js';
import type { HostPool, UpstreamHost } from './host-pool.js';
import { attemptHost } from './upstream-attempt.js';
import { errorCode, upstreamCutMidResponse, upstreamUnreachable } from './upstream-errors.js';
import { NO_UPSTREAM_FAILURES, type UpstreamFailures } from './upstream-failures.js';
import { createUpstreamPools, type UpstreamPoolOptions } from './upstream-pools.js';
import { spooledRelaySink, type SpoolLimits } from './spooled-relay.js';

export interface UndiciUpstreamForwarderOptions extends UpstreamPoolOptions {
  readonly pool: HostPool;
  readonly logger?: Logger;
  /** Told of every failed exchange (metrics). */
  readonly failures?: UpstreamFailures;
  /** How `spool` keeps what a client has not taken yet. */
  readonly spool: SpoolLimits;
}

type Opened =
  | { readonly kind: 'response'; readonly status: number; readonly host: UpstreamHost }
  | { readonly kind: 'error'; readonly error: ProxyError; readonly reachedUpstream: boolean; readonly host: UpstreamHost | null };

/**
 * Forwards requests over undici pools (docs/performance.md says why, with the measurement). A
 * host that could not even be connected to is skipped for the next one (each host at most once
 * per request); anything that fails after the request was handed to a connection is never
 * replayed, because Elasticsearch may have applied it.
 */
export class UndiciUpstreamForwarder implements UpstreamForwarder {
  private readonly options: UndiciUpstreamForwarderOptions;
  private readonly failures: UpstreamFailures;
  private readonly pools: Map<UpstreamHost, Pool>;

  constructor(options: UndiciUpstreamForwarderOptions) {
    this.options = options;
    this.failures = options.failures ?? NO_UPSTREAM_FAILURES;
    this.pools = createUpstreamPools(options.pool.hosts, options);
  }

  pipe(request: ForwardRequest, res: ServerResponse): Promise<ForwardOutcome> {
    const relay = relaySink(res);
    return this.relay(request, res, relay.sink, relay.over);
  }

  spool(request: ForwardRequest, res: ServerResponse): SpooledForward {
    const giveUp = (reason: string, error?: unknown): void =>
      this.options.logger?.warn({ err: error, method: request.method, url: request.url }, `client connection closed before its answer was delivered: ${reason}`);
    const relay = spooledRelaySink(res, this.options.spool, giveUp);
    return { outcome: this.relay(request, res, relay.sink, relay.over), delivered: relay.delivered };
  }

  private async relay(request: ForwardRequest, res: ServerResponse, sink: AnswerSink, over: Promise<Error | null>): Promise<ForwardOutcome> {
    const opened = await this.open(request, sink);
    if (opened.kind === 'error') {
      answerFailure(request, res, opened.error);
      return { status: statusFor(opened.error.code), reachedUpstream: opened.reachedUpstream, upstreamHost: opened.host?.label ?? null, error: opened.error };
    }
    const { status, host } = opened;
    const cut = await over;
    if (cut === null) return { status, reachedUpstream: true, upstreamHost: host.label, error: null };
    const error = this.cutMidResponse(host, cut);
    // The client saw a status line and then a cut connection: for a write, "it may have been applied".
    this.options.logger?.warn(
      { err: error, code: error.code, upstreamHost: host.label, method: request.method, url: request.url },
      'upstream answer cut short after its head was relayed: the client connection was cut, and a write in it may have been applied',
    );
    return { status, reachedUpstream: true, upstreamHost: host.label, error };
  }

  async exchange(request: ForwardRequest): Promise<UpstreamResponse> {
    const buffered = bufferSink();
    const opened = await this.open(request, buffered.sink);
    if (opened.kind === 'error') throw opened.error;
    const answer = await buffered.over;
    if (answer instanceof Error) throw this.cutMidResponse(opened.host, answer);
    const { rawHeaders, body } = answer;
    return { status: opened.status, headers: headersObject(rawHeaders), rawHeaders, body, upstreamHost: opened.host.label };
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.destroy()));
  }

  /** Tries hosts in pool order until one answers with a head or fails in a way that forbids a replay. */
  private async open(streamed: ForwardRequest, sink: AnswerSink): Promise<Opened> {
    const { pool, timeoutMs } = this.options;
    const request = await withArrivedBody(streamed);
    let unreached: string[] | null = null;
    for (const host of pool.attemptOrder()) {
      const result = await attemptHost(this.poolOf(host), host, request, sink, timeoutMs);
      if (result.kind === 'response') {
        pool.markUp(host);
        return { kind: 'response', status: result.status, host };
      }
      if (result.kind === 'unreached') {
        pool.markDown(host);
        (unreached ??= []).push(`${host.label} (${errorCode(result.cause) ?? result.cause.message})`);
        this.options.logger?.warn({ upstreamHost: host.label, err: result.cause }, 'Elasticsearch node unreachable, trying the next one');
        continue;
      }
      pool.markUp(host);
      if (result.reachedUpstream) this.failures.upstreamFailed(result.error.code);
      return { kind: 'error', error: result.error, reachedUpstream: result.reachedUpstream, host };
    }
    const error = upstreamUnreachable(unreached ?? []);
    this.failures.upstreamFailed(error.code);
    return { kind: 'error', error, reachedUpstream: false, host: null };
  }

  private poolOf(host: UpstreamHost): Pool {
    const pool = this.pools.get(host);
    if (pool === undefined) throw new Error(`no connection pool for ${host.label}`);
    return pool;
  }

  private cutMidResponse(host: UpstreamHost, cause: unknown): ProxyError {
    const error = upstreamCutMidResponse(host, this.options.timeoutMs, cause);
    this.failures.upstreamFailed(error.code);
    return error;
  }
}

/**
 * Answers an upstream failure in Elasticsearch's shape. A streamed request body that was not read
 * to its end leaves the connection unusable for another request: it is closed after the answer.
 */
function answerFailure(request: ForwardRequest, res: ServerResponse, error: ProxyError): void {
  if (res.destroyed) return;
  if (!Buffer.isBuffer(request.body) && !request.body.readableEnded) res.shouldKeepAlive = false;
  sendElasticsearchError(res, error);
}

/** Node's header object shape (lower-case names, repeats joined, set-cookie a list). */
function headersObject(raw: readonly string[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    const value = raw[i + 1] ?? '';
    const previous = headers[name];
    if (previous === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
    else if (Array.isArray(previous)) previous.push(value);
    else headers[name] = `${previous}, ${value}`;
  }
  return headers;
}
