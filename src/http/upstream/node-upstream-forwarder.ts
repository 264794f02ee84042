import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { statusFor } from '../../errors/error-codes.js';
import { ProxyError } from '../../errors/proxy-error.js';
import { sendElasticsearchError } from '../elasticsearch-error.js';
import type { ForwardOutcome, ForwardRequest, UpstreamForwarder, UpstreamResponse } from '../upstream-forwarder.js';
import { HostPool, type UpstreamHost } from './host-pool.js';
import { rawWithoutHopByHop } from '../hop-by-hop-headers.js';
import { attemptHost, DEFAULT_CONNECT_TIMEOUT_MS, errorCode, type AttemptResult } from './upstream-attempt.js';
import type { UpstreamAgents } from './upstream-agents.js';
import { NO_UPSTREAM_FAILURES, type UpstreamFailures } from './upstream-failures.js';

type Opened =
  | Extract<AttemptResult, { kind: 'response' }>
  | { readonly kind: 'error'; readonly error: ProxyError; readonly reachedUpstream: boolean; readonly host: UpstreamHost | null };

export interface NodeUpstreamForwarderOptions {
  readonly pool: HostPool;
  readonly agents: UpstreamAgents;
  readonly timeoutMs: number;
  readonly connectTimeoutMs?: number;
  readonly logger?: Logger;
  /** Told of every failed exchange (metrics). */
  readonly failures?: UpstreamFailures;
}

/**
 * Forwards requests over node:http(s) keep-alive agents. A host that could not even be connected
 * to is skipped for the next one (each host at most once per request); anything that fails after
 * the connection was up is never replayed, because Elasticsearch may have applied it.
 */
export class NodeUpstreamForwarder implements UpstreamForwarder {
  private readonly options: NodeUpstreamForwarderOptions;
  private readonly failures: UpstreamFailures;

  constructor(options: NodeUpstreamForwarderOptions) {
    this.options = options;
    this.failures = options.failures ?? NO_UPSTREAM_FAILURES;
  }

  async pipe(request: ForwardRequest, res: ServerResponse): Promise<ForwardOutcome> {
    const opened = await this.open(request);
    if (opened.kind === 'error') {
      answerFailure(request, res, opened.error);
      return { status: statusFor(opened.error.code), reachedUpstream: opened.reachedUpstream, upstreamHost: opened.host?.label ?? null, error: opened.error };
    }
    const { response, host } = opened;
    const status = response.statusCode ?? 502;
    const streamError = await relayStreaming(response, res);
    if (streamError === null) return { status, reachedUpstream: true, upstreamHost: host.label, error: null };
    const error = this.cutMidResponse(host, streamError);
    this.options.logger?.warn({ err: streamError, upstreamHost: host.label, url: request.url }, 'upstream response cut short');
    return { status, reachedUpstream: true, upstreamHost: host.label, error };
  }

  async exchange(request: ForwardRequest): Promise<UpstreamResponse> {
    const opened = await this.open(request);
    if (opened.kind === 'error') throw opened.error;
    const { response, host } = opened;
    try {
      const body = await readAll(response);
      return { status: response.statusCode ?? 502, headers: response.headers, rawHeaders: response.rawHeaders, body, upstreamHost: host.label };
    } catch (cause) {
      throw this.cutMidResponse(host, cause);
    }
  }

  async close(): Promise<void> {
    this.options.agents.destroy();
  }

  /** Tries hosts in pool order until one answers with headers or a failure that forbids a replay. */
  private async open(request: ForwardRequest): Promise<Opened> {
    const { pool, agents, timeoutMs } = this.options;
    const attempt = { agents, timeoutMs, connectTimeoutMs: this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS };
    let unreached: string[] | null = null;
    for (const host of pool.attemptOrder()) {
      const result = await attemptHost(host, request, attempt);
      if (result.kind === 'response') {
        pool.markUp(host);
        return result;
      }
      if (result.kind === 'unreached') {
        pool.markDown(host);
        (unreached ??= []).push(`${host.label} (${errorCode(result.cause) ?? result.cause.message})`);
        this.options.logger?.warn({ upstreamHost: host.label, err: result.cause }, 'Elasticsearch node unreachable, trying the next one');
        continue;
      }
      pool.markUp(host);
      if (result.kind === 'vetoed') return { kind: 'error', error: result.error, reachedUpstream: false, host };
      this.failures.upstreamFailed(result.error.code);
      return { kind: 'error', error: result.error, reachedUpstream: true, host };
    }
    const tried = unreached ?? [];
    const error = new ProxyError('UPSTREAM_UNREACHABLE', `no Elasticsearch node could be reached: ${tried.join(', ')}`, { meta: { tried } });
    this.failures.upstreamFailed(error.code);
    return { kind: 'error', error, reachedUpstream: false, host: null };
  }

  private cutMidResponse(host: UpstreamHost, cause: unknown): ProxyError {
    this.failures.upstreamFailed('UPSTREAM_RESET');
    return new ProxyError('UPSTREAM_RESET', `Elasticsearch node [${host.label}] closed the connection mid-response`, {
      cause,
      meta: { upstreamHost: host.label },
    });
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

/**
 * Streams status, headers and body to the client and settles once the upstream response is over
 * (null) or was cut (the error). A client that goes away does not cut the upstream exchange
 * short: the rest is drained so that "over" keeps meaning "Elasticsearch is done with it".
 */
function relayStreaming(response: IncomingMessage, res: ServerResponse): Promise<Error | null> {
  return new Promise((resolve) => {
    response.once('close', () => {
      if (response.complete) {
        resolve(null);
        return;
      }
      const error = new Error('upstream response cut short');
      res.destroy(error);
      resolve(error);
    });
    if (res.destroyed) {
      response.resume();
      return;
    }
    try {
      const { statusMessage } = response;
      if (statusMessage) res.writeHead(response.statusCode ?? 502, statusMessage, rawWithoutHopByHop(response.rawHeaders));
      else res.writeHead(response.statusCode ?? 502, rawWithoutHopByHop(response.rawHeaders));
    } catch (error) {
      res.destroy(error instanceof Error ? error : new Error(String(error)));
      response.resume();
      return;
    }
    res.once('close', () => {
      if (res.writableFinished) return;
      response.unpipe(res);
      response.resume();
    });
    response.pipe(res);
  });
}

function readAll(response: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.once('close', () => {
      if (!response.complete) reject(new Error('upstream response cut short'));
      else resolve(chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks));
    });
  });
}
