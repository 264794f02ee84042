import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { elasticsearchErrorBody, PROXY_RESPONSE_HEADERS } from '../http/elasticsearch-error.js';
import { ProxyError } from '../errors/proxy-error.js';
import { errorCode } from '../elasticsearch/forwarder/upstream-errors.js';

/**
 * Requests Node's HTTP parser rejects (malformed request line, raw non-ASCII bytes in the URL,
 * oversized headers, header timeout) never reach the app. Node would answer a bare 400; this
 * answers in Elasticsearch's error shape instead, then closes the connection.
 */
export function answerClientError(error: Error, socket: Socket): void {
  if (!socket.writable || socket.destroyed) {
    socket.destroy();
    return;
  }
  const code = errorCode(error);
  const proxyError =
    code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new ProxyError('REQUEST_TIMEOUT', 'request not received in time')
      : new ProxyError('BAD_REQUEST', `malformed HTTP request (${code ?? error.message})`);
  const body = elasticsearchErrorBody(proxyError);
  const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : body.status;
  const payload = JSON.stringify({ ...body, status });
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    ...Object.entries(PROXY_RESPONSE_HEADERS).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${Buffer.byteLength(payload)}`,
    'connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${payload}`);
}
