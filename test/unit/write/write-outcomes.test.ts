import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyRoute } from '../../../src/classify/route-parser.js';
import type { ForwardRequest } from '../../../src/elasticsearch/upstream-forwarder.js';
import type { WriteOutcome } from '../../../src/write/write-outcome.js';
import { createWritePath } from '../../../src/write/write-path.js';
import type { WriteRequest, WriteRoute } from '../../../src/write/write-request.js';
import { bulkOf, NDJSON, startWritePath, type WritePathHarness } from './write-harness.js';

/**
 * The write path without the HTTP edge: a request with no response object at all, so whatever
 * the write path answers must come back as an outcome.
 */
let harness: WritePathHarness;
afterEach(async () => {
  await harness?.engine.close();
});

let counter = 0;
function requestOf(method: string, url: string, body = '', headers: Record<string, string> = { 'content-type': 'application/json' }): WriteRequest & { streamed: ForwardRequest[] } {
  const route = classifyRoute(method, url, headers);
  if (route.kind === 'passthrough') throw new Error(`${method} ${url} is not a write`);
  const streamed: ForwardRequest[] = [];
  return {
    req: { method, url, headers, rawHeaders: Object.entries(headers).flat() } as unknown as IncomingMessage,
    route: route as WriteRoute,
    body: Buffer.from(body),
    bodyStreams: false,
    inflatedFrom: null,
    requestId: `outcome-${++counter}`,
    clientGone: new AbortController().signal,
    streamed,
    async streamAnswer(request) {
      streamed.push(request);
      return { status: 200, reachedUpstream: true, upstreamHost: 'fake:9200', error: null };
    },
  };
}

describe('the write path returns outcomes', () => {
  it('a locked single write: Elasticsearch\'s answer, read whole, for the edge to relay', async () => {
    harness = startWritePath();
    const outcome = await createWritePath(harness.deps)(requestOf('PUT', '/products/_doc/1', '{"v":1}'));
    expect(outcome.kind).toBe('upstream');
    const { upstream } = outcome as Extract<WriteOutcome, { kind: 'upstream' }>;
    expect(upstream.status).toBe(201);
    expect(JSON.parse(upstream.body.toString())).toMatchObject({ _index: 'products', _id: '1', result: 'created' });
    expect(harness.forwarder.sent.map((call) => call.via)).toEqual(['exchange']);
  });

  it('a lock wait timeout: the proxy\'s 429 error, when to retry noted (no header names), nothing forwarded', async () => {
    harness = startWritePath({ lock: { foregroundTimeoutMs: 20 } });
    await harness.block('products', '1');
    const outcome = await createWritePath(harness.deps)(requestOf('PUT', '/products/_doc/1', '{}'));
    expect(outcome).toMatchObject({ kind: 'error', error: { code: 'LOCK_TIMEOUT' }, notes: { retryAfterSeconds: 1 } });
    expect(harness.forwarder.calls).toHaveLength(0);
  });

  it('a write that needs no lock: a forward for the edge to stream, not yet sent', async () => {
    harness = startWritePath();
    const outcome = await createWritePath(harness.deps)(requestOf('POST', '/products/_doc', '{}'));
    expect(outcome).toMatchObject({ kind: 'forward', request: { method: 'POST', url: '/products/_doc' } });
    expect(harness.forwarder.calls).toHaveLength(0);
  });

  it('a whole bulk under all its locks: streamed through the request\'s streamAnswer, the outcome done', async () => {
    harness = startWritePath();
    const request = requestOf('POST', '/_bulk', bulkOf([['products', '1'], ['products', '2']]), NDJSON);
    const outcome = await createWritePath(harness.deps)(request);
    expect(outcome).toEqual({ kind: 'done' });
    expect(request.streamed).toHaveLength(1);
    expect(request.streamed[0]!.body).toBe(request.body);
  });

  it('a client mistake is an error outcome, never a throw', async () => {
    harness = startWritePath();
    const outcome = await createWritePath(harness.deps)(requestOf('PUT', '/products/_doc/1', '{}', { 'content-type': 'application/json', 'x-lock-type': 'urgent' }));
    expect(outcome).toMatchObject({ kind: 'error', error: { code: 'BAD_LOCK_HEADER' } });
  });
});
