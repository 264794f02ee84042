import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { FencingMode } from '../../../src/config/settings.js';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { exchange, isElasticsearchError } from './fault-kit.js';
import { answerOf, fencedWritesCounted, historyOf } from './fencing-kit.js';

const UPSTREAM_TIMEOUT_MS = 500;
const HUNG = { 'x-fault-phase': 'hung' };
const NDJSON = { 'content-type': 'application/x-ndjson' };

const MODES = LOCK_BACKENDS.flatMap((locks) => (['on', 'off'] satisfies FencingMode[]).map((fencing) => ({ locks, fencing, name: locks.name })));

/**
 * Issue #14: a write whose upstream answer timed out (504) is still inside the cluster when the
 * proxy releases its lock (once the upstream socket is closed); the next holder writes the
 * document, then the stale write is applied. Fencing on: it carries the `_seq_no` of its own read,
 * Elasticsearch refuses it and the document keeps the next holder's content. Off: it lands last.
 */
describe.each(MODES)('a write whose answer timed out ($name locks, proxy.fencing=$fencing)', ({ locks, fencing }) => {
  let stack: WriteStack | undefined;
  const summary: string[] = [];

  const start = async (): Promise<WriteStack> => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      proxies: 2,
      settings: { proxy: { upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS, fencing }, lock: { foregroundTimeoutMs: 5_000 } },
    });
    return stack;
  };
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });
  afterAll(() => console.log(`fencing 504 (${locks.name}, fencing=${fencing}): ${summary.join('; ')}`));

  it('single write', async () => {
    const { urls, standIn } = await start();
    const [urlA = '', urlB = ''] = urls;
    expect(answerOf(await exchange(`${urlB}/late/_doc/d1`, { method: 'PUT', body: '{"from":"seed"}' })).status).toBe(201);

    const gate = standIn.gate((request) => request.headers['x-fault-phase'] === 'hung');
    const timedOut = answerOf(await exchange(`${urlA}/late/_doc/d1`, { method: 'PUT', body: '{"from":"a"}', headers: HUNG }));
    expect(timedOut.status).toBe(504);
    expect(isElasticsearchError(timedOut, ['upstream_timeout_exception'])).toBe(true);
    const staleId = standIn.requests.find((request) => request.headers['x-fault-phase'] === 'hung')?.id;

    expect(answerOf(await exchange(`${urlB}/late/_doc/d1`, { method: 'PUT', body: '{"from":"b"}' })).status).toBe(200);
    gate.remove();
    await standIn.waitForApplied((write) => write.request.id === staleId);

    expectEnding(standIn, 'late', 'd1', fencing, { from: 'a' });
    // A 504 is no fenced write the proxy saw refused: the refusal happened after it gave up.
    expect(await fencedWritesCounted(stack!.proxies[0]!)).toBe(0);
    summary.push(`single: document ends ${JSON.stringify(standIn.document('late', 'd1')?.source)}`);
  });

  it('bulk item', async () => {
    const { urls, standIn } = await start();
    const [urlA = '', urlB = ''] = urls;
    expect(answerOf(await exchange(`${urlB}/late/_doc/d2`, { method: 'PUT', body: '{"from":"seed"}' })).status).toBe(201);

    const gate = standIn.gate((request) => request.headers['x-fault-phase'] === 'hung' && request.url.startsWith('/_bulk'));
    const bulk = `${JSON.stringify({ index: { _index: 'late', _id: 'd2' } })}\n{"from":"a"}\n`;
    const timedOut = answerOf(await exchange(`${urlA}/_bulk`, { method: 'POST', body: bulk, headers: { ...HUNG, ...NDJSON } }));
    if (fencing === 'on') {
      // A fenced bulk goes as a sub-bulk, never streamed: its upstream failure is the item's.
      expect(timedOut.status).toBe(200);
      expect(JSON.parse(timedOut.body)).toMatchObject({ errors: true, items: [{ index: { status: 504, error: { type: 'upstream_timeout_exception' } } }] });
    } else {
      expect(timedOut.status).toBe(504);
    }
    const staleId = standIn.requests.find((request) => request.headers['x-fault-phase'] === 'hung' && request.url.startsWith('/_bulk'))?.id;

    expect(answerOf(await exchange(`${urlB}/late/_doc/d2`, { method: 'PUT', body: '{"from":"b"}' })).status).toBe(200);
    gate.remove();
    await standIn.waitForApplied((write) => write.request.id === staleId);

    expectEnding(standIn, 'late', 'd2', fencing, { from: 'a' });
    summary.push(`bulk item: document ends ${JSON.stringify(standIn.document('late', 'd2')?.source)}`);
  });
});

function expectEnding(standIn: WriteStack['standIn'], index: string, id: string, fencing: FencingMode, stale: object): void {
  if (fencing === 'on') {
    expect(historyOf(standIn, index, id)).toEqual([
      [{ from: 'seed' }, 'created'],
      [{ from: 'b' }, 'updated'],
      [stale, 'version_conflict_engine_exception'],
    ]);
    expect(standIn.document(index, id)?.source).toEqual({ from: 'b' });
  } else {
    expect(historyOf(standIn, index, id)).toEqual([
      [{ from: 'seed' }, 'created'],
      [{ from: 'b' }, 'updated'],
      [stale, 'updated'],
    ]);
    expect(standIn.document(index, id)?.source).toEqual(stale);
  }
}
