import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { exchange, isElasticsearchError, type Outcome } from './fault-kit.js';

const UPSTREAM_TIMEOUT_MS = 500;
const NDJSON = { 'content-type': 'application/x-ndjson' };

function statusOf(outcome: Outcome): number {
  return outcome.kind === 'answered' ? outcome.answer.status : 0;
}

function bulkOf(index: string, id: string, v: string): string {
  return `${JSON.stringify({ index: { _index: index, _id: id } })}\n${JSON.stringify({ v })}\n`;
}

/**
 * Elasticsearch sends an answer's head, then its body stalls (a node paused or congested after it
 * applied the write). `proxy.upstream.timeout.ms` bounds the wait between body bytes as it bounds
 * the wait for the head: the exchange is ended, the lock released, and the client told — 504 when
 * the proxy had not started its answer, a cut connection when the head was already relayed. The
 * write was applied: a writer after it finds its content and overwrites it.
 */
describe.each(LOCK_BACKENDS)('an upstream body that stalls after the head ($name locks)', (locks) => {
  let stack: WriteStack;
  const summary: string[] = [];

  beforeAll(async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      proxies: 2,
      settings: { proxy: { upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS }, lock: { foregroundTimeoutMs: 5_000 } },
    });
    // Alias look-ups of the index are answered before the faults are armed.
    for (const base of stack.urls) expect(statusOf(await exchange(`${base}/sb/_doc/warm`, { method: 'PUT', body: '{}' }))).toBeLessThan(300);
  });
  afterAll(async () => {
    console.log(`stalled-upstream-body (${locks.name}): ${summary.join('; ')}`);
    await stack?.close();
  });

  it('single write: 504 upstream_timeout_exception in Elasticsearch shape, and the next writer to the document proceeds', async () => {
    const [first = '', second = ''] = stack.urls;
    stack.standIn.injectFault({ kind: 'stall-body-after-head', match: (request) => request.method === 'PUT' && request.url === '/sb/_doc/s1' });
    const stalled = await exchange(`${first}/sb/_doc/s1`, { method: 'PUT', body: '{"v":"stalled"}' });
    expect(stalled.kind).toBe('answered');
    if (stalled.kind !== 'answered') return;
    expect(stalled.answer.status).toBe(504);
    expect(isElasticsearchError(stalled.answer, ['upstream_timeout_exception']), stalled.answer.body).toBe(true);
    expect(stalled.answer.body).toContain('may have been applied');

    expect(statusOf(await exchange(`${second}/sb/_doc/s1`, { method: 'PUT', body: '{"v":"next"}' }))).toBe(200);
    expect(stack.standIn.history('sb', 's1').map((write) => write.body)).toEqual([{ v: 'stalled' }, { v: 'next' }]);
    expect(stack.standIn.document('sb', 's1')?.source).toEqual({ v: 'next' });
    summary.push('single 504, next writer 200');
  });

  it('single write whose client left during the stall: the lock is released all the same', async () => {
    const [first = '', second = ''] = stack.urls;
    stack.standIn.injectFault({ kind: 'stall-body-after-head', match: (request) => request.method === 'PUT' && request.url === '/sb/_doc/s2' });
    const leaving = new AbortController();
    const left = fetch(`${first}/sb/_doc/s2`, { method: 'PUT', body: '{"v":"left"}', headers: { 'content-type': 'application/json' }, signal: leaving.signal }).catch(
      (error: unknown) => error,
    );
    await stack.standIn.waitForApplied((write) => write.key === 'sb/s2');
    leaving.abort();
    expect(await left).toBeInstanceOf(Error);

    expect(statusOf(await exchange(`${second}/sb/_doc/s2`, { method: 'PUT', body: '{"v":"next"}' }))).toBe(200);
    expect(stack.standIn.document('sb', 's2')?.source).toEqual({ v: 'next' });
    summary.push('client gone, next writer 200');
  });

  it('bulk streamed whole: the relayed answer is cut, and the next writer to the document proceeds', async () => {
    const [first = '', second = ''] = stack.urls;
    stack.standIn.injectFault({ kind: 'stall-body-after-head', match: (request) => request.url === '/_bulk' && request.writeKeys.includes('sb/b1') });
    const stalled = await exchange(`${first}/_bulk`, { method: 'POST', body: bulkOf('sb', 'b1', 'stalled'), headers: NDJSON });
    // The status line was out: the connection is cut, not left waiting for the client's own timeout.
    expect(stalled.kind).toBe('unanswered');
    if (stalled.kind === 'unanswered') expect(stalled.error).not.toMatch(/TimeoutError/);

    const next = await exchange(`${second}/_bulk`, { method: 'POST', body: bulkOf('sb', 'b1', 'next'), headers: NDJSON });
    expect(statusOf(next)).toBe(200);
    expect(stack.standIn.history('sb', 'b1').map((write) => write.body)).toEqual([{ v: 'stalled' }, { v: 'next' }]);
    expect(stack.standIn.document('sb', 'b1')?.source).toEqual({ v: 'next' });
    summary.push('streamed bulk cut, next writer 200');
  });

  it('fencing read under the lock: its stalled answer ends the write with nothing written, and the next writer proceeds', async () => {
    const [first = '', second = ''] = stack.urls;
    const proxy = stack.proxies[0];
    if (proxy === undefined) throw new Error('no proxy');
    const unfenced = proxy.settings();
    proxy.reload({ ...unfenced, proxy: { ...unfenced.proxy, fencing: 'on' } });
    let fenced: Outcome;
    try {
      stack.standIn.injectFault({ kind: 'stall-body-after-head', match: (request) => request.method === 'GET' && request.url.startsWith('/sb/_doc/f1?') });
      fenced = await exchange(`${first}/sb/_doc/f1`, { method: 'PUT', body: '{"v":"fenced"}' });
    } finally {
      proxy.reload(unfenced);
    }
    expect(fenced.kind).toBe('answered');
    if (fenced.kind !== 'answered') return;
    expect(fenced.answer.status).toBe(503);
    expect(isElasticsearchError(fenced.answer, ['fencing_unavailable_exception']), fenced.answer.body).toBe(true);

    expect(statusOf(await exchange(`${second}/sb/_doc/f1`, { method: 'PUT', body: '{"v":"next"}' }))).toBe(201);
    expect(stack.standIn.history('sb', 'f1').map((write) => write.body)).toEqual([{ v: 'next' }]);
    summary.push('fencing read stalled: 503, nothing written, next writer 201');
  });

  it('pass-through read: the relayed answer is cut instead of hanging', async () => {
    const [first = ''] = stack.urls;
    stack.standIn.injectFault({ kind: 'stall-body-after-head', match: (request) => request.method === 'GET' && request.url === '/sb/_doc/s1' });
    const read = await exchange(`${first}/sb/_doc/s1`, { method: 'GET' });
    expect(read.kind).toBe('unanswered');
    if (read.kind === 'unanswered') expect(read.error).not.toMatch(/TimeoutError/);
    summary.push('pass-through read cut');
  });
});
