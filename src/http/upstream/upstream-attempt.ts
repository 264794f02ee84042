import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { ProxyError } from '../../errors/proxy-error.js';
import type { ForwardRequest } from '../upstream-forwarder.js';
import type { UpstreamHost } from './host-pool.js';
import type { UpstreamAgents } from './upstream-agents.js';
import { upstreamRequestHeaders } from './upstream-headers.js';

/** Upper bound on establishing a connection; a host that needs longer is treated as unreachable. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export type AttemptResult =
  | { readonly kind: 'response'; readonly response: IncomingMessage; readonly host: UpstreamHost }
  /** The connection was never established: no byte reached the host, the next host may be tried. */
  | { readonly kind: 'unreached'; readonly host: UpstreamHost; readonly cause: Error }
  /** `beforeSend` refused at hand-over: nothing was written, no other host is tried. */
  | { readonly kind: 'vetoed'; readonly host: UpstreamHost; readonly error: ProxyError }
  /** Bytes may have reached Elasticsearch: never replayed. */
  | { readonly kind: 'failed'; readonly host: UpstreamHost; readonly error: ProxyError };

export interface AttemptOptions {
  readonly agents: UpstreamAgents;
  /** No response headers within this time → 504. */
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
}

/**
 * Sends `request` to one host and settles on the response headers or the first failure. Nothing
 * is written before the connection is established (a fresh socket connected, or a kept-alive one
 * assigned): the request head goes out with the first body bytes, so a refused connection has
 * consumed nothing of a streamed body, and `beforeSend` runs at the very moment of hand-over.
 * One timer per attempt (the response deadline); a fresh connection adds its connect deadline.
 */
export function attemptHost(host: UpstreamHost, request: ForwardRequest, options: AttemptOptions): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let clientRequest: ClientRequest;
    let streamsBody: boolean;
    try {
      const head = upstreamRequestHeaders(request, host);
      streamsBody = head.streamsBody;
      clientRequest = send(host, request, head.headers, options.agents);
    } catch (error) {
      resolve({ kind: 'failed', host, error: new ProxyError('BAD_REQUEST', `request cannot be forwarded: ${String(error)}`, { cause: error }) });
      return;
    }
    let connected = false;
    let timedOut = false;
    let settled = false;
    let connectTimer: NodeJS.Timeout | undefined;
    const settle = (result: AttemptResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(responseTimer);
      if (connectTimer !== undefined) clearTimeout(connectTimer);
      resolve(result);
    };
    const responseTimer = setTimeout(() => {
      timedOut = true;
      clientRequest.destroy(new Error(`no response within ${options.timeoutMs}ms`));
    }, options.timeoutMs);

    const handOver = (): void => {
      connected = true;
      if (connectTimer !== undefined) clearTimeout(connectTimer);
      const veto = request.beforeSend?.() ?? null;
      if (veto !== null) {
        settle({ kind: 'vetoed', host, error: veto });
        clientRequest.destroy(veto);
        return;
      }
      writeBody(clientRequest, request.body, streamsBody);
    };
    clientRequest.once('socket', (socket: Socket) => {
      if (clientRequest.reusedSocket || isEstablishedPlainSocket(socket)) {
        handOver();
        return;
      }
      socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', handOver);
      connectTimer = setTimeout(
        () => clientRequest.destroy(new Error(`connect timeout after ${options.connectTimeoutMs}ms`)),
        Math.min(options.connectTimeoutMs, options.timeoutMs),
      );
    });
    clientRequest.once('response', (response: IncomingMessage) => settle({ kind: 'response', response, host }));
    clientRequest.on('error', (error: Error) => {
      if (!connected) settle({ kind: 'unreached', host, cause: error });
      else if (timedOut) settle({ kind: 'failed', host, error: upstreamTimeout(host, options.timeoutMs, error) });
      else settle({ kind: 'failed', host, error: upstreamReset(host, error) });
    });
  });
}

function send(host: UpstreamHost, request: ForwardRequest, headers: string[], agents: UpstreamAgents): ClientRequest {
  return (host.https ? httpsRequest : httpRequest)({
    agent: agents.forHost(host),
    hostname: host.hostname,
    port: host.port,
    method: request.method,
    path: host.pathPrefix + request.url,
    headers,
  });
}

/**
 * A held body is written at once. A streamed one is piped; if the client stops sending before its
 * body is complete, the upstream request is cut too (Elasticsearch would wait for the rest).
 */
function writeBody(clientRequest: ClientRequest, body: Buffer | Readable, streamsBody: boolean): void {
  if (Buffer.isBuffer(body)) {
    clientRequest.end(body);
    return;
  }
  if (!streamsBody) {
    clientRequest.end();
    return;
  }
  body.once('close', () => {
    if (!body.readableEnded) clientRequest.destroy(new Error('client closed the connection before sending the whole body'));
  });
  body.pipe(clientRequest);
}

/** A fresh TLS socket only counts once its handshake is done ('secureConnect'). */
function isEstablishedPlainSocket(socket: Socket): boolean {
  return !socket.connecting && !(socket instanceof TLSSocket);
}

function upstreamTimeout(host: UpstreamHost, timeoutMs: number, cause: Error): ProxyError {
  return new ProxyError(
    'UPSTREAM_TIMEOUT',
    `Elasticsearch node [${host.label}] did not answer within ${timeoutMs}ms`,
    { cause, meta: { upstreamHost: host.label, timeoutMs } },
  );
}

function upstreamReset(host: UpstreamHost, cause: Error): ProxyError {
  const code = errorCode(cause);
  return new ProxyError(
    'UPSTREAM_RESET',
    `connection to Elasticsearch node [${host.label}] failed after the request was sent (${code ?? cause.message}); ` +
      'it was not retried because Elasticsearch may have applied it',
    { cause, meta: { upstreamHost: host.label, errorCode: code } },
  );
}

export function errorCode(error: unknown): string | null {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return null;
}
