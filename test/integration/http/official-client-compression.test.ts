import { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZOOKEEPER_LOCKS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { sendHolder } from '../write/write-client.js';

/** Short enough that the bulk's wait for the held document times out into a per-item 429. */
const FOREGROUND_TIMEOUT_MS = 300;

/**
 * The official client with `compression: true` gzips every request body, as the clients do by
 * themselves for cloud deployments: through the proxy (real ZooKeeper locks) every write lands,
 * and `helpers.bulk` retries the items answered 429 while another writer holds their document.
 */
describe.each(['off', 'on'] as const)('the official client with compression: true (proxy.fencing=%s)', (fencing) => {
  let stack: WriteStack;
  let client: Client;
  beforeAll(async () => {
    stack = await startWriteStack({
      ...ZOOKEEPER_LOCKS.stackLocks(),
      settings: { lock: { foregroundTimeoutMs: FOREGROUND_TIMEOUT_MS }, proxy: { fencing } },
    });
    client = new Client({ node: stack.urls[0] ?? '', compression: true, maxRetries: 0 });
  });
  afterAll(async () => {
    await client?.close();
    await stack?.close();
  });

  it('indexes, updates and deletes with gzip bodies', async () => {
    await client.index({ index: 'gz', id: 'a', document: { name: 'lamp', n: 1 } });
    await client.index({ index: 'gz', id: 'b', document: { name: 'desk' } });
    await client.update({ index: 'gz', id: 'a', doc: { n: 2 } });
    await client.delete({ index: 'gz', id: 'b' });
    const writes = stack.standIn.requests.filter((request) => request.method !== 'GET' && request.url.startsWith('/gz/'));
    expect(writes.filter((request) => request.wireBody.length > 0).every((request) => request.headers['content-encoding'] === 'gzip')).toBe(true);
    expect(stack.standIn.document('gz', 'a')?.source).toEqual({ name: 'lamp', n: 2 });
    expect(stack.standIn.document('gz', 'b')).toBeUndefined();
    expect(stack.standIn.overlaps.count).toBe(0);
  });

  it('helpers.bulk retries the items answered 429 while another writer holds one document: every document lands, in lock order', async () => {
    const index = `bulk-${fencing}`;
    const gate = stack.standIn.gateDocument(index, 'held');
    const holder = await sendHolder(gate, stack.urls[0] ?? '', `/${index}/_doc/held`, { from: 'holder' });
    let answered429 = 0;
    const onResponse = (_error: unknown, result: { body?: unknown } | null): void => {
      const items = (result?.body as { items?: Record<string, { status: number }>[] } | undefined)?.items ?? [];
      if (!items.some((item) => Object.values(item)[0]?.status === 429)) return;
      answered429 += 1;
      // The holder finishes once the bulk has been told to retry: its retry then waits for the lock, never overlaps.
      gate.remove();
    };
    client.diagnostic.on('response', onResponse);
    const ids = ['held', ...Array.from({ length: 30 }, (_, n) => `doc-${n}`)];
    try {
      const result = await client.helpers.bulk({
        datasource: ids.map((id) => ({ id, from: 'bulk' })),
        onDocument: (doc) => ({ index: { _index: index, _id: doc.id } }),
        retries: 20,
        wait: 50,
      });
      expect(result).toMatchObject({ total: ids.length, successful: ids.length, failed: 0 });
    } finally {
      client.diagnostic.off('response', onResponse);
      gate.remove();
    }
    expect((await holder.answer).status).toBeLessThan(300);
    expect(answered429).toBeGreaterThan(0);
    for (const id of ids) expect(stack.standIn.document(index, id)?.source).toEqual({ id, from: 'bulk' });
    // Forwarded whole (the retry of the held document alone): as it came, gzip. Split into
    // sub-bulks, or rewritten with fences: built from the inflated content, sent without a coding.
    const codings = new Set(stack.standIn.requests.filter((request) => request.url.startsWith('/_bulk')).map((bulk) => bulk.headers['content-encoding'] ?? 'none'));
    expect([...codings].sort()).toEqual(fencing === 'off' ? ['gzip', 'none'] : ['none']);
    expect(stack.standIn.history(index, 'held').map((write) => (write.body as { from?: string } | null)?.from)).toEqual(['holder', 'bulk']);
    expect(stack.standIn.overlaps.count).toBe(0);
  });
});
