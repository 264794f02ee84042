import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { ProxyError } from '../../errors/proxy-error.js';
import { withoutHopByHop } from '../hop-by-hop-headers.js';
import type { ForwardRequest } from '../upstream-forwarder.js';
import type { UpstreamHost } from './host-pool.js';
import type { UpstreamAgents } from './upstream-agents.js';

/** Upper bound on establishing a connection; a host that needs longer is treated as unreachable. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export type AttemptResult =
  | { readonly kind: 'response'; readonly response: IncomingMessage; readonly host: UpstreamHost }
  /** The connection was never established: no byte reached the host, the next host may be tried. */
  | { readonly kind: 'unreached'; readonly host: UpstreamHost; readonly cause: Error }
  /** Bytes may have reached Elasticsearch: never replayed. */
  | { readonly kind: 'failed'; readonly host: UpstreamHost; readonly error: ProxyError };

export interface AttemptOptions {
  readonly agents: UpstreamAgents;
  /** No response headers within this time → 504. */
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
}

/** Sends `request` to one host and settles on the response headers or the first failure. */
export function attemptHost(host: UpstreamHost, request: ForwardRequest, options: AttemptOptions): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let connected = false;
    let timedOut = false;
    let settled = false;
    let clientRequest: ClientRequest;

    const settle = (result: AttemptResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(headersTimer);
      resolve(result);
    };
    const connectTimer = setTimeout(() => {
      if (!connected) clientRequest.destroy(new Error(`connect timeout after ${options.connectTimeoutMs}ms`));
    }, Math.min(options.connectTimeoutMs, options.timeoutMs));
    const headersTimer = setTimeout(() => {
      timedOut = true;
      clientRequest.destroy(new Error(`no response within ${options.timeoutMs}ms`));
    }, options.timeoutMs);

    try {
      clientRequest = send(host, request, options.agents);
    } catch (error) {
      settle({ kind: 'failed', host, error: new ProxyError('BAD_REQUEST', `request cannot be forwarded: ${String(error)}`, { cause: error }) });
      return;
    }
    clientRequest.once('socket', (socket) => {
      if (clientRequest.reusedSocket || isEstablishedPlainSocket(socket)) connected = true;
      else socket.once(socket instanceof TLSSocket ? 'secureConnect' : 'connect', () => (connected = true));
    });
    clientRequest.once('response', (response) => settle({ kind: 'response', response, host }));
    clientRequest.on('error', (error) => {
      if (!connected) settle({ kind: 'unreached', host, cause: error });
      else if (timedOut) settle({ kind: 'failed', host, error: upstreamTimeout(host, options.timeoutMs, error) });
      else settle({ kind: 'failed', host, error: upstreamReset(host, error) });
    });
    clientRequest.end(request.body);
  });
}

function send(host: UpstreamHost, request: ForwardRequest, agents: UpstreamAgents): ClientRequest {
  const { url } = host;
  const requestFn = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return requestFn({
    agent: agents.forUrl(url),
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? undefined : Number(url.port),
    method: request.method,
    path: pathPrefix(url) + request.url,
    headers: upstreamHeaders(request, url),
  });
}

/** A node behind a reverse proxy may live under a path (`http://gw/es`); requests go beneath it. */
function pathPrefix(url: URL): string {
  return url.pathname.replace(/\/+$/, '');
}

/**
 * The client's headers minus hop-by-hop ones. `Host` names the upstream node (a name-routed
 * cluster such as Elastic Cloud needs it; Elasticsearch itself ignores it). `Expect` is dropped
 * because the body is already complete. `content-length` describes the buffered body, which
 * replaces any chunked framing the client used.
 */
export function upstreamHeaders(request: ForwardRequest, url: URL): IncomingHttpHeaders {
  const headers = withoutHopByHop(request.headers);
  delete headers.expect;
  headers.host = url.host;
  const clientFramedBody =
    request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;
  if (request.body.length > 0 || clientFramedBody) headers['content-length'] = String(request.body.length);
  else delete headers['content-length'];
  return headers;
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
