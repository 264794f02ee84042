import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HeldLock } from '../../../src/lock/lock-engine.js';
import type { Gate } from '../../support/es-stand-in.js';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { eventually, startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { BACKGROUND, ndjson, send } from './write-client.js';

const OWNER = { host: 'test', pid: process.pid, requestId: 'blocker' };
const NDJSON = { 'content-type': 'application/x-ndjson' };

function bulkBody(index: string, ids: readonly string[]): string {
  return ndjson(ids.flatMap((id, n) => [{ index: { _index: index, _id: id } }, { n }]));
}

/** The ids of the documents one sub-bulk the stand-in received carried, in order. */
function idsOf(body: string): string[] {
  return body
    .split('\n')
    .filter((line) => line.includes('"_id"'))
    .map((line) => (JSON.parse(line) as { index: { _id: string } }).index._id);
}

describe.each(LOCK_BACKENDS)('bulk without hold-and-wait ($name locks)', (backend) => {
  const locks = backend.name;
  let stack: WriteStack;
  let url: string;
  beforeAll(async () => {
    stack = await startWriteStack({
      ...backend.stackLocks(),
      standIn: { writeLatencyMs: 2 },
      settings: { lock: { foregroundTimeoutMs: 10_000, backgroundTimeoutMs: 10_000 } },
    });
    url = stack.urls[0]!;
  });
  afterAll(() => stack?.close());

  const bulks = (): string[][] => stack.standIn.requests.filter((r) => r.url === '/_bulk').map((r) => idsOf(r.body.toString()));

  it('forwards the items of free documents at once and a held document\'s items when its lock comes', async () => {
    const index = `nhw-${locks}-1`;
    const blocker: HeldLock = await stack.proxies[0]!.locks.acquire({ index, id: 'held' }, 'foreground', { timeoutMs: 5_000, owner: OWNER });
    const before = bulks().length;
    const answer = send(url, 'POST', '/_bulk', bulkBody(index, ['a', 'held', 'b', 'held']), { ...NDJSON, ...BACKGROUND });
    // The free documents went out while `held` was still held by somebody else.
    await eventually(() => bulks().length > before);
    expect(bulks()[before]).toEqual(['a', 'b']);
    await blocker.release();
    const response = await answer;
    expect(response.status).toBe(200);
    expect(bulks()[before + 1]).toEqual(['held', 'held']);
    const items = response.json.items as Record<string, { _id: string; status: number }>[];
    expect(items.map((item) => item.index!._id)).toEqual(['a', 'held', 'b', 'held']);
    expect(items.every((item) => item.index!.status < 300)).toBe(true);
    expect(response.json.errors).toBe(false);
  });

  it('sends the first sub-bulk alone, then up to two at the cluster at once, never two with one document', async () => {
    const index = `nhw-${locks}-chain`;
    const engine = stack.proxies[0]!.locks;
    const blockers = new Map<string, HeldLock>();
    for (const id of ['h1', 'h2', 'h3', 'h4']) blockers.set(id, await engine.acquire({ index, id }, 'foreground', { timeoutMs: 5_000, owner: OWNER }));
    /** Hands a blocked document to the bulk and waits until the bulk holds it. */
    const handOver = async (id: string): Promise<void> => {
      await blockers.get(id)!.release();
      await eventually(async () => {
        const holder = (await engine.inspect({ index, id })).holder;
        return holder !== null && holder.owner.requestId !== OWNER.requestId;
      });
    };
    const atCluster = new Map(['a', 'h1', 'h2', 'h3'].map((id) => [id, stack.standIn.gateDocument(index, id)]));
    const gate = (id: string): Gate => atCluster.get(id)!;
    const before = bulks().length;
    const ids = ['a', 'h1', 'b', 'h2', 'c', 'h3', 'h4', 'h4'];
    const answer = send(url, 'POST', '/_bulk', bulkBody(index, ids), { ...NDJSON, ...BACKGROUND });

    await gate('a').arrived();
    await handOver('h1');
    // The first sub-bulk is alone at the cluster until it is answered: h1's item waits.
    expect(bulks().slice(before)).toEqual([['a', 'b', 'c']]);
    gate('a').release();

    await gate('h1').arrived();
    await handOver('h2');
    // Once one sub-bulk was answered, the next goes beside the one at the cluster.
    await gate('h2').arrived();
    expect(bulks().slice(before)).toEqual([['a', 'b', 'c'], ['h1'], ['h2']]);
    await handOver('h3');
    await handOver('h4');
    // Two are at the cluster: h3's and h4's items wait, and go together when one is answered.
    expect(bulks().slice(before)).toEqual([['a', 'b', 'c'], ['h1'], ['h2']]);
    gate('h1').release();
    await gate('h3').arrived();
    gate('h3').release();
    gate('h2').release();

    const response = await answer;
    expect(response.status).toBe(200);
    expect(bulks().slice(before)).toEqual([['a', 'b', 'c'], ['h1'], ['h2'], ['h3', 'h4', 'h4']]);
    const subBulks = stack.standIn.requests.filter((r) => r.url === '/_bulk').slice(before);
    for (const later of subBulks.slice(1)) expect(later.arrivedAt).toBeGreaterThanOrEqual(subBulks[0]!.finishedAt!);
    // At most two at the cluster at any moment (counted as each one arrives).
    for (const sub of subBulks) expect(subBulks.filter((other) => other.arrivedAt <= sub.arrivedAt && sub.arrivedAt < other.finishedAt!).length).toBeLessThanOrEqual(2);
    const items = response.json.items as Record<string, { _id: string; status: number }>[];
    expect(items.map((item) => item.index!._id)).toEqual(ids);
    expect(response.json.errors).toBe(false);
    expect(['a', 'h1', 'b', 'h2', 'c', 'h3'].map((id) => stack.standIn.document(index, id)?.source)).toEqual([0, 1, 2, 3, 4, 5].map((n) => ({ n })));
    // h4's two items in the client's order: the second one wins.
    expect(stack.standIn.document(index, 'h4')?.source).toEqual({ n: 7 });
    expect(stack.standIn.overlaps.count).toBe(0);
  });

  it('sends the original body untouched when every lock is had at once', async () => {
    const index = `nhw-${locks}-2`;
    const body = bulkBody(index, ['x', 'y', 'x']);
    const response = await send(url, 'POST', '/_bulk', body, NDJSON);
    expect(response.status).toBe(200);
    expect(stack.standIn.requests.at(-1)?.body.toString()).toBe(body);
  });

  it('completes bulks whose document sets cross, with no overlap and no timeout', async () => {
    const index = `nhw-${locks}-3`;
    const ids = ['p', 'q', 'r', 's'];
    const sends = Array.from({ length: 12 }, (_, n) => {
      const order = n % 2 === 0 ? ids : [...ids].reverse();
      return send(url, 'POST', '/_bulk', bulkBody(index, order), { ...NDJSON, ...BACKGROUND });
    });
    const responses = await Promise.all(sends);
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(response.json.errors).toBe(false);
    }
    expect(stack.standIn.overlaps.count).toBe(0);
  });

  it('leaves no lock behind: every key of a bulk is free right after its answer', async () => {
    const index = `nhw-${locks}-4`;
    const ids = Array.from({ length: 50 }, (_, i) => `k${i}`);
    const response = await send(url, 'POST', '/_bulk', bulkBody(index, ids), NDJSON);
    expect(response.status).toBe(200);
    const engine = stack.proxies[0]!.locks;
    const granted: HeldLock[] = [];
    const result = await engine.acquireEach(
      ids.map((id) => ({ index, id })),
      'foreground',
      { timeoutMs: 2_000, owner: OWNER, onGranted: (lock) => granted.push(lock) },
    );
    expect(result.failed.size).toBe(0);
    await Promise.all(granted.map((lock) => lock.release()));
  });
});
