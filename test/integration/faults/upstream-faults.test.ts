import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { exchange, isElasticsearchError, type Outcome } from './fault-kit.js';

const UPSTREAM_TIMEOUT_MS = 500;
const NDJSON = { 'content-type': 'application/x-ndjson' };

function statusOf(outcome: Outcome): number {
  return outcome.kind === 'answered' ? outcome.answer.status : 0;
}

function expectProxyError(outcome: Outcome, status: number, type: string): void {
  expect(outcome.kind).toBe('answered');
  if (outcome.kind !== 'answered') return;
  expect(outcome.answer.status).toBe(status);
  expect(isElasticsearchError(outcome.answer, [type]), outcome.answer.body).toBe(true);
}

function bulkOf(index: string, id: string): string {
  return `${JSON.stringify({ index: { _index: index, _id: id } })}\n{"v":1}\n`;
}

/**
 * The cluster misbehaves under a locked write: the answer is Elasticsearch-shaped 502/504, the
 * write is never replayed (it may have been applied), and the document's lock is held until the
 * upstream socket is closed. Closing the socket does not take a write out of Elasticsearch: a
 * write still held inside the cluster after its 504 overlaps the next holder's and can land after
 * it (the oracle shows it; fencing, proxy.fencing=on, is what closes it).
 */
describe.each(LOCK_BACKENDS)('upstream faults under locked writes ($name locks)', (locks) => {
  let stack: WriteStack;
  const summary: string[] = [];
  const arrivalsOf = (url: string): number => stack.standIn.requests.filter((request) => request.url === url).length;

  beforeAll(async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      proxies: 2,
      settings: { proxy: { upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS }, lock: { foregroundTimeoutMs: 5_000 } },
    });
  });
  afterAll(async () => {
    console.log(`upstream-faults (${locks.name}): ${summary.join('; ')}`);
    await stack?.close();
  });

  it('cluster refuses connections: 502 upstream_unreachable_exception (503 while an alias cannot be resolved), nothing arrives', async () => {
    const [url = ''] = stack.urls;
    // Warm the alias cache for `uf` (made first: a name that does not exist yet is looked up again on
    // its next write): the write itself must then fail on the upstream connection.
    await exchange(`http://127.0.0.1:${stack.standIn.port}/uf`, { method: 'PUT', body: '{}' });
    expect(statusOf(await exchange(`${url}/uf/_doc/warm`, { method: 'PUT', body: '{}' }))).toBe(201);
    stack.standIn.resetLog();
    await stack.standIn.refuseConnections();
    let single: Outcome;
    let bulk: Outcome;
    let unresolved: Outcome;
    try {
      single = await exchange(`${url}/uf/_doc/refused`, { method: 'PUT', body: '{"v":1}' });
      bulk = await exchange(`${url}/_bulk`, { method: 'POST', body: bulkOf('uf', 'refused'), headers: NDJSON });
      unresolved = await exchange(`${url}/uf-cold/_doc/refused`, { method: 'PUT', body: '{"v":1}' });
    } finally {
      await stack.standIn.acceptConnections();
    }
    expectProxyError(single, 502, 'upstream_unreachable_exception');
    expectProxyError(bulk, 502, 'upstream_unreachable_exception');
    // An index never seen cannot be told apart from an alias: no lock key, so no write (503, replay-safe).
    expectProxyError(unresolved, 503, 'alias_resolution_exception');
    expect(stack.standIn.requests).toHaveLength(0);
    const next = await exchange(`${url}/uf/_doc/refused`, { method: 'PUT', body: '{"v":2}' });
    expect(statusOf(next)).toBe(201);
    const ms = (outcome: Outcome): number => Math.round(outcome.kind === 'answered' ? outcome.answer.ms : -1);
    summary.push(`refused 502 x2 in ${ms(single)}/${ms(bulk)} ms, unresolved alias 503 in ${ms(unresolved)} ms (0 arrivals)`);
  });

  it('reset before the answer: 502 upstream_connection_reset_exception, sent once, never replayed', async () => {
    const [url = ''] = stack.urls;
    stack.standIn.injectFault({ kind: 'reset-before-headers', match: (request) => request.url === '/uf/_doc/reset1' });
    const single = await exchange(`${url}/uf/_doc/reset1`, { method: 'PUT', body: '{"v":1}' });
    expectProxyError(single, 502, 'upstream_connection_reset_exception');
    expect(arrivalsOf('/uf/_doc/reset1')).toBe(1);

    stack.standIn.injectFault({ kind: 'reset-before-headers', match: (request) => request.writeKeys.includes('uf/reset-bulk') });
    const bulk = await exchange(`${url}/_bulk`, { method: 'POST', body: bulkOf('uf', 'reset-bulk'), headers: NDJSON });
    expectProxyError(bulk, 502, 'upstream_connection_reset_exception');
    expect(stack.standIn.requests.filter((request) => request.body.toString().includes('reset-bulk'))).toHaveLength(1);

    expect(statusOf(await exchange(`${url}/uf/_doc/reset1`, { method: 'PUT', body: '{"v":2}' }))).toBe(201);
    summary.push('reset-before-headers 502 x2 (1 arrival each)');
  });

  it('reset mid-response: single write 502; a streamed bulk answer is cut; each sent once; locks freed', async () => {
    const [url = ''] = stack.urls;
    stack.standIn.injectFault({ kind: 'reset-mid-response', match: (request) => request.url === '/uf/_doc/mid1' });
    const single = await exchange(`${url}/uf/_doc/mid1`, { method: 'PUT', body: '{"v":1}' });
    expectProxyError(single, 502, 'upstream_connection_reset_exception');
    expect(arrivalsOf('/uf/_doc/mid1')).toBe(1);

    // A bulk whose locks were all had streams Elasticsearch's answer: the status line is already
    // out when the upstream breaks, so the client connection is cut (documented in the README).
    stack.standIn.injectFault({ kind: 'reset-mid-response', match: (request) => request.writeKeys.includes('uf/mid-bulk') });
    const bulk = await exchange(`${url}/_bulk`, { method: 'POST', body: bulkOf('uf', 'mid-bulk'), headers: NDJSON });
    expect(bulk.kind).toBe('unanswered');
    expect(stack.standIn.requests.filter((request) => request.body.toString().includes('mid-bulk'))).toHaveLength(1);

    expect(statusOf(await exchange(`${url}/uf/_doc/mid1`, { method: 'PUT', body: '{"v":2}' }))).toBe(201);
    expect(statusOf(await exchange(`${url}/_bulk`, { method: 'POST', body: bulkOf('uf', 'mid-bulk'), headers: NDJSON }))).toBe(200);
    summary.push('reset-mid-response single 502, bulk cut (1 arrival each)');
  });

  it('hang past proxy.upstream.timeout.ms: 504, and the next write to the document arrives only after the hung socket closed', async () => {
    const [first = '', second = ''] = stack.urls;
    let hungSocketClosedAt: number | null = null;
    const stopWatching = stack.standIn.onRequest((request, res) => {
      if (request.headers['x-fault-phase'] === 'hang') res.once('close', () => (hungSocketClosedAt = performance.now()));
      return false;
    });
    const gate = stack.standIn.gate((request) => request.headers['x-fault-phase'] === 'hang');
    let hungRequestId = -1;
    try {
      const startedAt = performance.now();
      const hung = exchange(`${first}/uf/_doc/hang1`, { method: 'PUT', body: '{"v":"hung"}', headers: { 'x-fault-phase': 'hang' } });
      await gate.arrived(1);
      const next = exchange(`${second}/uf/_doc/hang1`, { method: 'PUT', body: '{"v":"next"}' });
      const hungOutcome = await hung;
      const hungMs = performance.now() - startedAt;
      expectProxyError(hungOutcome, 504, 'upstream_timeout_exception');
      expect(hungMs).toBeGreaterThanOrEqual(UPSTREAM_TIMEOUT_MS);
      expect(hungMs).toBeLessThan(UPSTREAM_TIMEOUT_MS + 1_000);
      expect(statusOf(await next)).toBe(201);

      const arrivals = stack.standIn.requests.filter((request) => request.url === '/uf/_doc/hang1');
      expect(arrivals.map((request) => request.body.toString())).toEqual(['{"v":"hung"}', '{"v":"next"}']);
      expect(hungSocketClosedAt).not.toBeNull();
      expect(arrivals[1]?.arrivedAt).toBeGreaterThan(hungSocketClosedAt ?? Infinity);
      hungRequestId = arrivals[0]?.id ?? -1;
      // The hung write is still inside the cluster when the next one arrives.
      expect(stack.standIn.overlaps.examples.map((example) => example.key)).toEqual(['uf/hang1']);
    } finally {
      gate.remove();
      stopWatching();
    }
    // Released, it lands after the next write: the document ends with the stale content.
    await stack.standIn.waitForApplied((write) => write.request.id === hungRequestId);
    expect(stack.standIn.history('uf', 'hang1').map((write) => [write.body, write.result])).toEqual([
      [{ v: 'next' }, 'created'],
      [{ v: 'hung' }, 'updated'],
    ]);
    expect(stack.standIn.document('uf', 'hang1')?.source).toEqual({ v: 'hung' });
    expect(stack.standIn.appliedOverlaps().map((overlap) => [overlap.key, overlap.first.body, overlap.second.body])).toEqual([['uf/hang1', { v: 'next' }, { v: 'hung' }]]);

    stack.standIn.injectFault({ kind: 'hang', match: (request) => request.writeKeys.includes('uf/hang-bulk') });
    const bulk = await exchange(`${first}/_bulk`, { method: 'POST', body: bulkOf('uf', 'hang-bulk'), headers: NDJSON });
    expectProxyError(bulk, 504, 'upstream_timeout_exception');
    expect(stack.standIn.requests.filter((request) => request.body.toString().includes('hang-bulk'))).toHaveLength(1);
    summary.push('hang 504 x2 (1 arrival each, next write only after the hung socket closed; the hung write, still in the cluster, landed after it: 1 overlap)');
  });
});
