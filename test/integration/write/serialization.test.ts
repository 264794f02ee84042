import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startEsStandIn } from '../../support/es-stand-in.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ndjson, send } from './write-client.js';

const DOCS = ['d1', 'd2', 'd/3', 'd4'];
const COMPAT7 = { 'content-type': 'application/vnd.elasticsearch+json;compatible-with=7', accept: 'application/vnd.elasticsearch+json;compatible-with=7' };

/** One write of every route the proxy locks, aimed at `id`. */
function writeOf(n: number, id: string): { method: string; path: string; body?: unknown; headers?: Record<string, string> } {
  const encoded = encodeURIComponent(id);
  switch (n % 7) {
    case 0:
      return { method: 'PUT', path: `/products/_doc/${encoded}`, body: { n } };
    case 1:
      return { method: 'PUT', path: `/products/_create/${encoded}`, body: { n } };
    case 2:
      return { method: 'POST', path: `/products/_update/${encoded}`, body: { doc: { n }, doc_as_upsert: true } };
    case 3:
      return { method: 'DELETE', path: `/products/_doc/${encoded}` };
    case 4:
      return { method: 'PUT', path: `/products/_doc/${encoded}`, body: { n }, headers: COMPAT7 };
    case 5:
      return { method: 'POST', path: `/products/_doc/${encoded}/_update`, body: { doc: { n }, doc_as_upsert: true }, headers: COMPAT7 };
    default:
      return {
        method: 'POST',
        path: '/_bulk',
        body: ndjson([{ index: { _index: 'products', _id: id } }, { n }, { delete: { _index: 'products', _id: DOCS[(n + 1) % DOCS.length] } }]),
        headers: { 'content-type': 'application/x-ndjson' },
      };
  }
}

async function hammer(urls: readonly string[], writes: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: writes }, (_, n) => {
      const write = writeOf(n, DOCS[n % DOCS.length] ?? 'd1');
      return send(urls[n % urls.length] ?? '', write.method, write.path, write.body, write.headers).then((r) => r.status);
    }),
  );
}

describe('the serialization oracle', () => {
  it('sees overlaps when the same load bypasses the proxy', async () => {
    const standIn = await startEsStandIn({ writeLatencyMs: 3 });
    try {
      await hammer([standIn.url], 140);
      expect(standIn.overlaps.count).toBeGreaterThan(0);
    } finally {
      await standIn.stop();
    }
  });
});

describe.each(LOCK_BACKENDS)('serialization through two proxies ($name locks)', (locks) => {
  let stack: WriteStack;
  beforeAll(async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      proxies: 2,
      standIn: { writeLatencyMs: 3 },
      settings: { lock: { foregroundTimeoutMs: 20_000, backgroundTimeoutMs: 20_000 } },
    });
  });
  afterAll(() => stack?.close());

  it('index, create, update, delete, typed and bulk writes never overlap on a document', async () => {
    const statuses = await hammer(stack.urls, 140);
    expect(statuses.filter((status) => status >= 500 || status === 429)).toEqual([]);
    expect(stack.standIn.overlaps.count).toBe(0);
    expect(stack.standIn.maxConcurrentPerDocument).toBe(1);
    const writesSeen = stack.standIn.requests.filter((request) => request.method !== 'GET' && request.method !== 'HEAD');
    // A bulk's items go out as their documents' locks come: one or more sub-bulks, every item once.
    const singles = writesSeen.filter((request) => !request.url.endsWith('/_bulk'));
    const bulkItems = writesSeen
      .filter((request) => request.url.endsWith('/_bulk'))
      .flatMap((request) => request.body.toString().split('\n').filter((line) => /"(index|delete)":/.test(line)));
    expect(singles.length).toBe(120);
    expect(bulkItems.length).toBe(40);
    console.log(`serialization (${locks.name}): ${statuses.length} writes over ${DOCS.length} documents via 2 proxies, 0 overlaps`);
  });
});
