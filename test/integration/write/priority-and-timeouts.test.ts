import { Client } from '@elastic/elasticsearch';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { eventually, startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { BACKGROUND, FOREGROUND, ndjson, send, sendHolder } from './write-client.js';

const KEY = { index: 'products', id: 'hot' };

function writerOf(body: Buffer): string | undefined {
  const match = /"writer":"([^"]+)"/.exec(body.toString('utf8'));
  return match?.[1];
}

/**
 * Requests waiting for a lock, over every proxy (each process queues its own requests locally);
 * the proxies of an in-process stack share one engine, counted once.
 */
function waiting(stack: WriteStack, shared: boolean): number {
  const engines = shared ? stack.proxies.slice(0, 1) : stack.proxies;
  return engines.reduce((sum, proxy) => sum + proxy.locks.activity().waiting, 0);
}

async function lockTimeoutsCounted(stack: WriteStack): Promise<number> {
  const text = (await stack.proxies[0]!.metrics.render()).body;
  return sampleValue(parsePrometheusText(text), 'es_lock_proxy_lock_timeouts_total', { priority: 'foreground' });
}

describe.each(LOCK_BACKENDS)('priorities, timeouts and partial bulks ($name locks)', (locks) => {
  let stack: WriteStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('a queued foreground write overtakes queued background writes but not the running one', async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      proxies: 2,
      settings: { lock: { foregroundTimeoutMs: 20_000, backgroundTimeoutMs: 20_000 } },
    });
    const [p0, p1] = stack.urls as [string, string];
    const gate = stack.standIn.gateDocument('products', 'hot');
    const put = (url: string, writer: string, headers: Record<string, string>) => send(url, 'PUT', '/products/_doc/hot', { writer }, headers);

    const running = put(p0, 'bg-running', BACKGROUND);
    await gate.arrived(1);
    const queued = [put(p1, 'bg-1', BACKGROUND)];
    const shared = locks.name === 'in-process';
    await eventually(() => waiting(stack!, shared) === 1);
    queued.push(put(p0, 'bg-2', BACKGROUND));
    await eventually(() => waiting(stack!, shared) === 2);
    queued.push(put(p1, 'fg', FOREGROUND));
    await eventually(() => waiting(stack!, shared) === 3);

    // ZooKeeper: one queue entry per process, at the rank of its best waiting request (p1's moved
    // up to foreground); p0's own waiter waits locally behind its running holder. In process: the
    // one local queue, foreground first.
    await eventually(async () => (await stack!.proxies[0]!.locks.inspect(KEY)).queue[0]?.priority === 'foreground');
    const inspection = await stack.proxies[0]!.locks.inspect(KEY);
    expect(inspection.holder?.priority).toBe('background');
    const expectedQueue = shared ? ['foreground', 'background', 'background'] : ['foreground', 'background'];
    expect(inspection.queue.map((waiter) => waiter.priority)).toEqual(expectedQueue);
    expect(gate.arrivals).toBe(1);

    gate.release();
    const statuses = (await Promise.all([running, ...queued])).map((r) => r.status);
    expect(statuses).toEqual([201, 200, 200, 200]);
    const order = stack.standIn.requests.filter((r) => r.url === '/products/_doc/hot').map((r) => writerOf(r.body));
    expect(order).toEqual(['bg-running', 'fg', 'bg-1', 'bg-2']);
  });

  it('a foreground lock wait timeout answers 429 in Elasticsearch shape with Retry-After, nothing forwarded', async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), settings: { lock: { foregroundTimeoutMs: 300 } } });
    const url = stack.urls[0]!;
    const gate = stack.standIn.gateDocument('products', 'hot');
    const { answer: running } = await sendHolder(gate, url, '/products/_doc/hot', { writer: 'first' });

    const timedOut = await send(url, 'PUT', '/products/_doc/hot', { writer: 'second' }, FOREGROUND);
    expect(timedOut.status).toBe(429);
    expect(timedOut.headers.get('retry-after')).toBe('1');
    expect(timedOut.headers.get('x-elastic-product')).toBe('Elasticsearch');
    expect(timedOut.headers.get('content-type')).toContain('application/json');
    expect(timedOut.json).toMatchObject({
      status: 429,
      error: { type: 'lock_wait_timeout_exception', root_cause: [{ type: 'lock_wait_timeout_exception' }] },
    });
    expect(JSON.stringify(timedOut.json)).toContain('[products][hot]');
    expect((await stack.proxies[0]!.locks.inspect(KEY)).queue).toHaveLength(0);

    gate.release();
    expect((await running).status).toBe(201);
    expect(stack.standIn.requests.map((r) => writerOf(r.body)).filter((w) => w !== undefined)).toEqual(['first']);
  });

  it('a bulk answers items it could not lock as per-item 429s, in order, and forwards the rest', async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), settings: { lock: { foregroundTimeoutMs: 300 } } });
    const url = stack.urls[0]!;
    const gate = stack.standIn.gateDocument('products', 'hot');
    const { answer: running } = await sendHolder(gate, url, '/products/_doc/hot', { writer: 'holder' });

    const body = ndjson([
      { index: { _id: 'a' } },
      { v: 1 },
      { index: { _id: 'hot' } },
      { v: 2 },
      { create: { _id: 'c' } },
      { v: 3 },
      { index: {} },
      { v: 4 },
    ]);
    const bulk = await send(url, 'POST', '/products/_bulk', body, { 'content-type': 'application/x-ndjson' });
    expect(bulk.status).toBe(200);
    const items = bulk.json.items as Record<string, { status: number; _id: string | null; error?: { type: string } }>[];
    expect(bulk.json.errors).toBe(true);
    expect(items.map((item) => Object.keys(item)[0])).toEqual(['index', 'index', 'create', 'index']);
    expect(items.map((item) => Object.values(item)[0]!.status)).toEqual([201, 429, 201, 201]);
    expect(items[1]!.index!.error!.type).toBe('lock_wait_timeout_exception');
    expect(items[1]!.index!._id).toBe('hot');
    const forwarded = stack.standIn.requests.filter((r) => r.url.endsWith('/_bulk'));
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0]!.body.toString()).not.toContain('"hot"');

    gate.release();
    await running;
  });

  it('the official bulk helper completes by retrying the 429 items', async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), settings: { lock: { foregroundTimeoutMs: 200 } } });
    const gate = stack.standIn.gateDocument('products', 'hot');
    const { answer: running } = await sendHolder(gate, stack.urls[0]!, '/products/_doc/hot', { writer: 'holder' });
    // The holder finishes once the helper's first bulk has been answered with a 429 for `hot`.
    void eventually(async () => (await lockTimeoutsCounted(stack!)) > 0).then(() => gate.release());

    const client = new Client({ node: stack.urls[0]! });
    try {
      const ids = ['a', 'b', 'hot', 'c'];
      const result = await client.helpers.bulk({
        datasource: ids.map((id) => ({ id, writer: 'helper' })),
        onDocument: (doc) => ({ index: { _index: 'products', _id: doc.id } }),
        retries: 3,
        wait: 50,
        flushBytes: 1_000_000,
      });
      expect(result.failed).toBe(0);
      expect(result.successful).toBe(ids.length);
      expect(result.retry).toBeGreaterThan(0);
      expect(stack.standIn.document('products', 'hot')?.source).toMatchObject({ writer: 'helper' });
    } finally {
      await client.close();
    }
    await running;
  });

  it('a client that gives up while waiting leaves the queue at once and is never forwarded', async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), settings: { lock: { foregroundTimeoutMs: 20_000 } } });
    const url = stack.urls[0]!;
    const gate = stack.standIn.gateDocument('products', 'hot');
    const running = send(url, 'PUT', '/products/_doc/hot', { writer: 'holder' });
    await gate.arrived(1);

    const abandon = new AbortController();
    const waiting = send(url, 'PUT', '/products/_doc/hot', { writer: 'quitter' }, {}, abandon.signal).catch((error: unknown) => error);
    await eventually(async () => (await stack!.proxies[0]!.locks.inspect(KEY)).queue.length === 1);
    abandon.abort();
    await waiting;
    await eventually(async () => (await stack!.proxies[0]!.locks.inspect(KEY)).queue.length === 0);

    gate.release();
    expect((await running).status).toBe(201);
    expect((await send(url, 'PUT', '/products/_doc/hot', { writer: 'after' })).status).toBe(200);
    const writers = stack.standIn.requests.map((r) => writerOf(r.body)).filter((w) => w !== undefined);
    expect(writers).toEqual(['holder', 'after']);
  });
});
