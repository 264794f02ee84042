import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { FOREGROUND, ndjson, send } from './write-client.js';

/**
 * Ways two writes to one document could reach the cluster at once through the write path: each
 * test failed on the proxy before its fix.
 */
const NDJSON = { 'content-type': 'application/x-ndjson' };

describe.each(LOCK_BACKENDS)('write-path lock safety ($name locks)', (locks) => {
  let stack: WriteStack;
  beforeAll(async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      proxies: 2,
      // A leaked lock shows as a 429 after this wait instead of a grant.
      settings: { lock: { foregroundTimeoutMs: 1_500, backgroundTimeoutMs: 1_500 }, proxy: { aliasCacheTtlMs: 60_000 } },
    });
  });
  afterAll(() => stack?.close());

  it('a _bulk with an invalid item fails that item as Elasticsearch does and leaves no lock behind', async () => {
    const bulk = await send(
      stack.urls[0]!,
      'POST',
      '/_bulk',
      ndjson([{ index: { _index: 'aaa', _id: '1' } }, { v: 'bulk' }, { index: { _index: 'zzz', _id: '' } }, { v: 'empty id' }]),
      NDJSON,
    );
    // The key the request named must be free at once, whatever the request was answered.
    const next = await send(stack.urls[1]!, 'PUT', '/aaa/_doc/1', { v: 'next' }, FOREGROUND);
    expect(next.status, JSON.stringify(next.json)).toBe(200);
    expect(bulk.status, JSON.stringify(bulk.json)).toBe(200);
    const items = bulk.json.items as Record<string, { status: number; error?: { type: string } }>[];
    expect(items).toHaveLength(2);
    expect(items[0]?.index?.status).toBe(201);
    expect(items[1]?.index?.status).toBe(400);
    expect(items[1]?.index?.error).toBeDefined();
    expect(bulk.json.errors).toBe(true);
    expect(stack.standIn.document('aaa', '1')?.source).toEqual({ v: 'next' });
  });

  it('writes through an alias stay serialized across proxies whose caches disagree after a rollover', async () => {
    stack.standIn.defineAlias('logs', 'logs-000001');
    // Proxy 0 learns logs -> logs-000001 and keeps it for the TTL.
    expect((await send(stack.urls[0]!, 'PUT', '/logs/_doc/warm', { v: 0 })).status).toBe(201);
    // Rollover: the alias now writes to logs-000002; proxy 1 has not cached anything yet.
    stack.standIn.defineAlias('logs', 'logs-000002', ['logs-000001']);
    stack.standIn.resetLog();
    const gate = stack.standIn.gateDocument('logs', '42');
    const first = send(stack.urls[0]!, 'PUT', '/logs/_doc/42', { v: 'first' });
    await gate.arrived(1);
    const second = send(stack.urls[1]!, 'PUT', '/logs/_doc/42', { v: 'second' });
    // Whichever comes first: the second write reaches the cluster while the first is held there
    // (the hole), or it queues for the lock behind the first (serialized).
    await Promise.race([
      stack.standIn.waitForRequest((request) => request.method === 'PUT' && request.url === '/logs/_doc/42' && request.body.includes('second')),
      vi.waitFor(async () => expect(await queuedOn(stack.adminUrls[0]!, 'logs', '42')).toBeGreaterThan(0), { timeout: 10_000, interval: 20 }),
    ]);
    gate.release();
    const answers = await Promise.all([first, second]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 201]);
    expect(stack.standIn.overlaps.count).toBe(0);
    expect(stack.standIn.document('logs-000002', '42')?.source).toEqual({ v: 'second' });
  });
});

/**
 * Requests queued for the lock of `index/id` as the admin API reports it. Writes through an alias
 * are keyed on the alias name itself (docs/requests-and-responses.md), which is what makes them
 * independent of each proxy's alias cache.
 */
async function queuedOn(adminUrl: string, index: string, id: string): Promise<number> {
  const inspection = (await (await fetch(`${adminUrl}/locks/${index}/${id}`)).json()) as { queue?: unknown[] };
  return inspection.queue?.length ?? 0;
}
