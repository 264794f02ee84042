import type { IncomingMessage, ServerResponse } from 'node:http';
import { finished } from 'node:stream';
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import { statusFor } from '../../errors/error-codes.js';
import { ProxyError } from '../../errors/proxy-error.js';
import { sendElasticsearchError } from '../elasticsearch-error.js';
import { rawWithoutHopByHop } from '../hop-by-hop-headers.js';
import type { ForwardOutcome, ForwardRequest, UpstreamForwarder, UpstreamResponse } from '../upstream-forwarder.js';
import { HostPool, type UpstreamHost } from './host-pool.js';
import { attemptHost, DEFAULT_CONNECT_TIMEOUT_MS, errorCode, type AttemptResult } from './upstream-attempt.js';
import { createUpstreamAgents, type UpstreamAgents } from './upstream-agents.js';

type Opened = Extract<AttemptResult, { kind: 'response' }> | { readonly kind: 'error'; readonly error: ProxyError; readonly reachedUpstream: boolean; readonly host: UpstreamHost | null };

export interface NodeUpstreamForwarderOptions {
  readonly pool: HostPool;
  readonly agents: UpstreamAgents;
  readonly timeoutMs: number;
  readonly connectTimeoutMs?: number;
  readonly logger?: Logger;
}

/**
 * Forwards buffered requests over node:http(s) keep-alive agents. A host that could not even be
 * connected to is skipped for the next one (each host at most once per request); anything that
 * fails after the connection was up is never replayed, because Elasticsearch may have applied it.
 */
export class NodeUpstreamForwarder implements UpstreamForwarder {
  private readonly options: NodeUpstreamForwarderOptions;

  constructor(options: NodeUpstreamForwarderOptions) {
    this.options = options;
  }

  async pipe(request: ForwardRequest, res: ServerResponse): Promise<ForwardOutcome> {
    const opened = await this.open(request);
    if (opened.kind === 'error') {
      if (!res.destroyed) sendElasticsearchError(res, opened.error);
      return { status: statusFor(opened.error.code), reachedUpstream: opened.reachedUpstream, upstreamHost: opened.host?.label ?? null, error: opened.error };
    }
    const { response, host } = opened;
    const status = response.statusCode ?? 502;
    const streamError = await relayStreaming(response, res);
    if (streamError === null) return { status, reachedUpstream: true, upstreamHost: host.label, error: null };
    const error = cutMidResponse(host, streamError);
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
      throw cutMidResponse(host, cause);
    }
  }

  async close(): Promise<void> {
    this.options.agents.destroy();
  }

  /** Tries hosts in pool order until one answers with headers or a failure that forbids a replay. */
  private async open(request: ForwardRequest): Promise<Opened> {
    const { pool, agents, timeoutMs } = this.options;
    const connectTimeoutMs = this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const unreached: string[] = [];
    for (const host of pool.attemptOrder()) {
      const result = await attemptHost(host, request, { agents, timeoutMs, connectTimeoutMs });
      if (result.kind === 'unreached') {
        pool.markDown(host);
        unreached.push(`${host.label} (${errorCode(result.cause) ?? result.cause.message})`);
        this.options.logger?.warn({ upstreamHost: host.label, err: result.cause }, 'Elasticsearch node unreachable, trying the next one');
        continue;
      }
      pool.markUp(host);
      if (result.kind === 'failed') return { kind: 'error', error: result.error, reachedUpstream: true, host };
      return result;
    }
    const error = new ProxyError('UPSTREAM_UNREACHABLE', `no Elasticsearch node could be reached: ${unreached.join(', ')}`, {
      meta: { tried: unreached },
    });
    return { kind: 'error', error, reachedUpstream: false, host: null };
  }
}

export function createUpstreamForwarder(settings: Settings, logger?: Logger): NodeUpstreamForwarder {
  return new NodeUpstreamForwarder({
    pool: new HostPool(settings.elasticsearch.hosts),
    agents: createUpstreamAgents(settings.elasticsearch),
    timeoutMs: settings.proxy.upstreamTimeoutMs,
    ...(logger !== undefined ? { logger } : {}),
  });
}

function cutMidResponse(host: UpstreamHost, cause: unknown): ProxyError {
  return new ProxyError('UPSTREAM_RESET', `Elasticsearch node [${host.label}] closed the connection mid-response`, {
    cause,
    meta: { upstreamHost: host.label },
  });
}

/**
 * Streams status, headers and body to the client and settles once the upstream response is over
 * (null) or was cut (the error). A client that goes away does not cut the upstream exchange
 * short: the rest is drained so that "over" keeps meaning "Elasticsearch is done with it".
 */
function relayStreaming(response: IncomingMessage, res: ServerResponse): Promise<Error | null> {
  return new Promise((resolve) => {
    finished(response, (error) => {
      if (error) res.destroy(error);
      resolve(error ?? null);
    });
    if (res.destroyed) {
      response.resume();
      return;
    }
    try {
      writeUpstreamHead(res, response);
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

function writeUpstreamHead(res: ServerResponse, response: IncomingMessage): void {
  const headers = rawWithoutHopByHop(response.rawHeaders, response.headers);
  const status = response.statusCode ?? 502;
  if (response.statusMessage) res.writeHead(status, response.statusMessage, headers);
  else res.writeHead(status, headers);
}

function readAll(response: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    finished(response, (error) => (error ? reject(error) : resolve(Buffer.concat(chunks))));
  });
}
