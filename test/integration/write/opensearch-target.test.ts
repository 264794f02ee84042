import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startEsStandIn, type EsStandInOptions } from '../../support/es-stand-in.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ndjson, send } from './write-client.js';

/*
 * The proxy in front of OpenSearch, with the stand-in serving OpenSearch's routes: 1.x takes the
 * typed routes with no header, 2.17 adds the streaming bulk. Every write of one document goes
 * through the same lock, whichever route names it, or is refused before it reaches the cluster.
 */

const DOC = 'd1';
const WRITES = 60;

/** Typed and typeless writes of one document, as an OpenSearch 1.x client mixes them. */
function openSearch1Write(n: number): { method: string; path: string; body: string } {
  switch (n % 3) {
    case 0:
      return { method: 'PUT', path: `/products/event/${DOC}`, body: JSON.stringify({ n }) };
    case 1:
      return { method: 'PUT', path: `/products/_doc/${DOC}`, body: JSON.stringify({ n }) };
    default:
      return { method: 'POST', path: '/products/event/_bulk', body: ndjson([{ index: { _id: DOC } }, { n }]) };
  }
}

async function hammer(urls: readonly string[]): Promise<number[]> {
  return Promise.all(
    Array.from({ length: WRITES }, (_, n) => {
      const write = openSearch1Write(n);
      return send(urls[n % urls.length] ?? '', write.method, write.path, write.body).then((r) => r.status);
    }),
  );
}

const OPENSEARCH_1: EsStandInOptions = { writeLatencyMs: 3, distribution: 'opensearch-1' };

describe('the serialization oracle as OpenSearch 1.x', () => {
  it('sees overlaps when typed and typeless writes bypass the proxy', async () => {
    const standIn = await startEsStandIn(OPENSEARCH_1);
    try {
      const statuses = await hammer([standIn.url]);
      expect(statuses.every((status) => status === 200 || status === 201)).toBe(true);
      expect(standIn.overlaps.count).toBeGreaterThan(0);
    } finally {
      await standIn.stop();
    }
  });
});

describe.each(LOCK_BACKENDS)('OpenSearch 1.x behind two proxies ($name locks)', (locks) => {
  let stack: WriteStack;
  beforeAll(async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), proxies: 2, standIn: OPENSEARCH_1, settings: { lock: { foregroundTimeoutMs: 20_000, backgroundTimeoutMs: 20_000 } } });
  });
  afterAll(() => stack?.close());

  it('locks typed writes sent with no header like typeless ones: no overlap on the document', async () => {
    const statuses = await hammer(stack.urls);
    expect(statuses.filter((status) => status !== 200 && status !== 201)).toEqual([]);
    expect(stack.standIn.overlaps.count).toBe(0);
    expect(stack.standIn.maxConcurrentPerDocument).toBe(1);
    expect(stack.standIn.document('products', DOC)?.version).toBe(WRITES);
  });

  it('takes a typeless bulk whose action lines name a `_type`, as OpenSearch 1.x does', async () => {
    const body = ndjson([{ index: { _index: 'products', _type: 'event', _id: 'typed-line' } }, { n: 1 }]);
    const response = await send(stack.urls[0] ?? '', 'POST', '/_bulk', body, { 'content-type': 'application/x-ndjson' });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({ errors: false });
    expect(stack.standIn.document('products', 'typed-line')?.source).toEqual({ n: 1 });
  });
});

describe.each(LOCK_BACKENDS)('the OpenSearch 2.17 streaming bulk behind the proxy ($name locks)', (locks) => {
  let stack: WriteStack;
  beforeAll(async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), standIn: { distribution: 'opensearch-2.17' } });
  });
  afterAll(() => stack?.close());

  it.each(['/_bulk/stream', '/products/_bulk/stream'])('POST %s is refused with 400 in Elasticsearch’s error shape and never reaches the cluster', async (path) => {
    const body = ndjson([{ index: { _index: 'products', _id: 'streamed' } }, { n: 1 }]);
    const response = await send(stack.urls[0] ?? '', 'POST', path, body, { 'content-type': 'application/x-ndjson' });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({ status: 400, error: { type: 'illegal_argument_exception' } });
    expect(JSON.stringify(response.json)).toContain('streaming bulk');
    expect(stack.standIn.requests.filter((request) => request.url.includes('/stream'))).toEqual([]);
    expect(stack.standIn.document('products', 'streamed')).toBeUndefined();
  });
});
