import type { ForwardRequest } from '../upstream-forwarder.js';

/**
 * A streamed body that has already arrived whole (a search's few hundred bytes come in the same
 * packet as its headers) is forwarded as bytes: undici writes a Buffer at once, where a stream
 * costs it a round of listeners and ticks per request. In `open-loop` (200 searches/s) the proxy
 * added 0.69–0.97 ms p50 to a search with the stream (the node:http agent 0.40–0.61 ms in the same
 * pairs), 0.40–0.45 ms with the bytes (the agent 0.51–0.54 ms). Nothing is waited for that has not
 * arrived: a body still on its way, or one sent chunked, streams as before.
 */
export async function withArrivedBody(request: ForwardRequest): Promise<ForwardRequest> {
  const { body } = request;
  if (Buffer.isBuffer(body)) return request;
  const declared = declaredLength(request.rawHeaders);
  if (declared === null || declared === 0) return request;
  // The 'request' event comes before Node's parser pushes the body bytes read with the headers;
  // they are buffered once the socket's read callback has returned, which one microtask waits for.
  await undefined;
  if (body.readableLength !== declared) return request;
  const bytes: unknown = body.read();
  return Buffer.isBuffer(bytes) ? { ...request, body: bytes } : request;
}

function declaredLength(rawHeaders: readonly string[]): number | null {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if ((rawHeaders[i] ?? '').toLowerCase() === 'content-length') return Number(rawHeaders[i + 1]);
  }
  return null;
}
