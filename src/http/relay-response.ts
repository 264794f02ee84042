import type { ServerResponse } from 'node:http';
import { encodedAnswer } from './body/answer-compression.js';
import { PROXY_RESPONSE_HEADERS } from './elasticsearch-error.js';
import { rawWithoutHopByHop } from '../elasticsearch/hop-by-hop-headers.js';
import type { UpstreamResponse } from '../elasticsearch/upstream-forwarder.js';
import { presentedAnswer } from './response-options/present.js';
import { lenientResponseOptionsOf, type ResponseOptions } from './response-options/response-options.js';

/**
 * Sends a buffered upstream answer to the client as Elasticsearch sent it: status and headers
 * (hop-by-hop ones excepted), with `content-length` describing `upstream.body` — which the
 * caller may have rewritten (a merged bulk answer).
 */
export function relayUpstreamResponse(res: ServerResponse, upstream: UpstreamResponse): void {
  if (res.destroyed) return;
  res.writeHead(upstream.status, headersFor(upstream));
  res.end(upstream.body);
}

function headersFor(upstream: UpstreamResponse): string[] {
  return [...rawWithoutHopByHop(upstream.rawHeaders, ['content-length']), 'content-length', contentLengthFor(upstream)];
}

/** An empty body with a declared length is a HEAD answer: its length describes the GET body. */
function contentLengthFor(upstream: UpstreamResponse): string {
  const declared = upstream.headers['content-length'];
  if (upstream.body.length === 0 && declared !== undefined) return declared;
  return String(upstream.body.length);
}

/**
 * Answers with a JSON body the proxy built (a merged bulk answer): Elasticsearch's product and
 * content-type headers, the body written as the request asked (`filter_path`, `pretty`) and
 * compressed when the client accepts it, as Elasticsearch's own answers are (answer-compression.ts).
 * Over TLS they are not, as Elasticsearch's `http.compression` defaults to off with HTTPS: a
 * compressed answer that reflects request data next to secrets leaks them (BREACH).
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: Buffer | string | object,
  extraHeaders: Readonly<Record<string, string>> = {},
  options: ResponseOptions = lenientResponseOptionsOf(res.req?.url),
): void {
  if (res.destroyed) return;
  const answer = encodedAnswer(presentedAnswer(body, options), overTls(res) ? undefined : res.req?.headers['accept-encoding']);
  res.writeHead(status, { ...PROXY_RESPONSE_HEADERS, ...extraHeaders, ...answer.headers, 'content-length': String(answer.body.length) });
  res.end(answer.body);
}

function overTls(res: ServerResponse): boolean {
  return (res.socket as { encrypted?: boolean } | null)?.encrypted === true;
}
