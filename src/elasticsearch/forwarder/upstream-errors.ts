import { ProxyError } from '../../errors/proxy-error.js';
import type { UpstreamHost } from './host-pool.js';

/** The failures of one exchange with an Elasticsearch node, as the proxy answers them. */

export function requestNotForwardable(cause: unknown): ProxyError {
  return new ProxyError('BAD_REQUEST', `request cannot be forwarded: ${String(cause)}`, { cause });
}

export function upstreamTimeout(host: UpstreamHost, timeoutMs: number, cause: Error): ProxyError {
  return new ProxyError('UPSTREAM_TIMEOUT', `Elasticsearch node [${host.label}] did not answer within ${timeoutMs}ms`, {
    cause,
    meta: { upstreamHost: host.label, timeoutMs },
  });
}

export function upstreamReset(host: UpstreamHost, cause: Error): ProxyError {
  const code = errorCode(cause);
  return new ProxyError(
    'UPSTREAM_RESET',
    `connection to Elasticsearch node [${host.label}] failed after the request was sent (${code ?? cause.message}); ` +
      'it was not retried because Elasticsearch may have applied it',
    { cause, meta: { upstreamHost: host.label, errorCode: code } },
  );
}

/** The answer's head came and its body did not come to its end: Elasticsearch has seen the request. */
export function upstreamCutMidResponse(host: UpstreamHost, timeoutMs: number, cause: unknown): ProxyError {
  if (errorCode(cause) === 'UND_ERR_BODY_TIMEOUT') {
    return new ProxyError(
      'UPSTREAM_TIMEOUT',
      `Elasticsearch node [${host.label}] sent the head of its answer, then nothing for ${timeoutMs}ms; ` +
        'the request may have been applied',
      { cause, meta: { upstreamHost: host.label, timeoutMs } },
    );
  }
  return new ProxyError('UPSTREAM_RESET', `Elasticsearch node [${host.label}] closed the connection mid-response; the request may have been applied`, {
    cause,
    meta: { upstreamHost: host.label },
  });
}

export function upstreamUnreachable(tried: readonly string[]): ProxyError {
  return new ProxyError('UPSTREAM_UNREACHABLE', `no Elasticsearch node could be reached: ${tried.join(', ')}`, { meta: { tried } });
}

/** `error.code` of a Node or undici error (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`, ...). */
export function errorCode(error: unknown): string | null {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return null;
}
