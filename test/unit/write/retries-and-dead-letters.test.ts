import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeDeadLetterBody } from '../../../src/deadletter/dead-letter-record.js';
import { bulkOf, NDJSON, startWritePath, type WritePathHarness } from './write-harness.js';

/**
 * Lock wait timeouts of background writes: re-queued `elastic.request.retry.count` times with
 * full-jitter backoff, then dead-lettered. Fake timers make the waits exact: with the jitter
 * pinned at one half, attempt k+1 starts `timeout + 100 * 2^(k-1) / 2` ms after attempt k.
 */
const TIMEOUT_MS = 1_000;
const T0 = Date.UTC(2025, 0, 1);

let harness: WritePathHarness;
beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await harness?.engine.close();
});

function withRetries(count: number): WritePathHarness {
  return startWritePath({
    lock: { foregroundTimeoutMs: TIMEOUT_MS, backgroundTimeoutMs: TIMEOUT_MS },
    elasticsearch: { requestRetryCount: count },
  });
}

const iso = (offsetMs: number): string => new Date(T0 + offsetMs).toISOString();

describe('single-document writes whose lock wait times out', () => {
  it('re-queues a background write with backoff, then dead-letters it and answers 429 naming the record', async () => {
    harness = withRetries(2);
    await harness.block('products', '1');
    const write = harness.start('PUT', '/products/_doc/1?refresh=true', { body: { v: 1 }, priority: 'background' });
    await vi.runAllTimersAsync();
    await write.done;
    expect(write.res.statusCode).toBe(429);
    expect(write.res.json().error.type).toBe('lock_wait_timeout_exception');
    expect(write.res.headers['retry-after']).toBe('1');
    const [record] = harness.deadLetters.records;
    expect(harness.deadLetters.records).toHaveLength(1);
    expect(write.res.headers['x-dead-letter-id']).toBe(record!.id);
    expect(record).toMatchObject({
      method: 'PUT',
      path: '/products/_doc/1',
      query: 'refresh=true',
      priority: 'background',
      keys: [{ index: 'products', id: '1' }],
      attempts: 3,
      lastError: { code: 'LOCK_TIMEOUT' },
    });
    expect(decodeDeadLetterBody(record!.body).toString()).toBe('{"v":1}');
    // Backoff before attempt 2: up to 100 ms, before attempt 3: up to 200 ms (jitter pinned at 1/2).
    expect(record!.attemptedAt).toEqual([iso(0), iso(TIMEOUT_MS + 50), iso(2 * TIMEOUT_MS + 50 + 100)]);
    expect(harness.forwarder.calls).toHaveLength(0);
    expect(harness.engine.activity()).toEqual({ held: 1, waiting: 0 });
    expect(harness.reports.map((report) => [report.outcome, report.attempt])).toEqual([
      ['retried', 1],
      ['retried', 2],
      ['dead_lettered', 3],
    ]);
  });

  it('writes a background write whose lock comes during a retry', async () => {
    harness = withRetries(2);
    const blocker = await harness.block('products', '1');
    const write = harness.start('PUT', '/products/_doc/1', { body: {}, priority: 'background' });
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS);
    expect(harness.reports.map((report) => report.outcome)).toEqual(['retried']);
    await blocker.release();
    await vi.runAllTimersAsync();
    await write.done;
    expect(write.res.statusCode).toBe(201);
    expect(harness.forwarder.sent[0]!.holdersAtSend).toEqual({ 'products/1': write.exchange.requestId });
    expect(harness.deadLetters.records).toHaveLength(0);
    expect(harness.reports.map((report) => [report.outcome, report.attempt])).toEqual([
      ['retried', 1],
      ['acquired', 2],
    ]);
    expect(harness.engine.activity()).toEqual({ held: 0, waiting: 0 });
  });

  it('gives a foreground write a single wait, whatever the retry count, and never dead-letters it', async () => {
    harness = withRetries(3);
    await harness.block('products', '1');
    const write = harness.start('PUT', '/products/_doc/1', { body: {}, priority: 'foreground' });
    await vi.runAllTimersAsync();
    await write.done;
    expect(write.res.statusCode).toBe(429);
    expect(write.res.headers['x-dead-letter-id']).toBeUndefined();
    expect(harness.deadLetters.records).toHaveLength(0);
    expect(harness.reports.map((report) => [report.outcome, report.attempt])).toEqual([['timeout', 1]]);
  });

  it('still answers 429 when the dead-letter queue cannot be written, without a record id', async () => {
    harness = withRetries(0);
    harness.deadLetters.failing = true;
    await harness.block('products', '1');
    const write = harness.start('PUT', '/products/_doc/1', { body: {}, priority: 'background' });
    await vi.runAllTimersAsync();
    await write.done;
    expect(write.res.statusCode).toBe(429);
    expect(write.res.headers['x-dead-letter-id']).toBeUndefined();
    expect(harness.reports.map((report) => report.outcome)).toEqual(['timeout']);
  });

  it('gives up quietly when the client hangs up during the backoff: nothing sent, nothing left queued', async () => {
    harness = withRetries(2);
    await harness.block('products', '1');
    const write = harness.start('PUT', '/products/_doc/1', { body: {}, priority: 'background' });
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS);
    write.hangUp();
    await write.done;
    expect(write.res.writableEnded).toBe(false);
    expect(harness.forwarder.calls).toHaveLength(0);
    expect(harness.deadLetters.records).toHaveLength(0);
    expect(harness.engine.activity()).toEqual({ held: 1, waiting: 0 });
    expect(harness.reports.map((report) => report.outcome)).toEqual(['retried', 'aborted']);
  });
});

describe('_bulk items whose lock wait times out', () => {
  it('re-queues only the waiting items of a background bulk, then dead-letters exactly their lines', async () => {
    harness = withRetries(1);
    await harness.block('products', 'held');
    const body = bulkOf([['products', 'held'], ['products', 'free'], ['products', 'held']]);
    const write = harness.start('POST', '/_bulk', { body, headers: NDJSON, priority: 'background' });
    await vi.runAllTimersAsync();
    await write.done;
    expect(write.res.statusCode).toBe(200);
    const answer = write.res.json();
    expect(answer.items.map((item: Record<string, { status: number }>) => item.index!.status)).toEqual([429, 201, 429]);
    expect(answer.errors).toBe(true);
    const [record] = harness.deadLetters.records;
    expect(write.res.headers['x-dead-letter-id']).toBe(record!.id);
    expect(record).toMatchObject({ method: 'POST', path: '/_bulk', priority: 'background', keys: [{ index: 'products', id: 'held' }], attempts: 2 });
    expect(decodeDeadLetterBody(record!.body).toString()).toBe(bulkOf([['products', 'held']]) + bulkOf([['products', 'held']]).replace('"n":0', '"n":2'));
    expect(record!.attemptedAt).toEqual([iso(0), iso(TIMEOUT_MS + 50)]);
    expect(harness.forwarder.sent).toHaveLength(1);
    expect(harness.engine.activity()).toEqual({ held: 1, waiting: 0 });
    expect(harness.reports.map((report) => report.outcome)).toEqual(['retried', 'dead_lettered']);
  });

  it('writes the waiting items of a background bulk whose lock comes in a later round', async () => {
    harness = withRetries(2);
    const blocker = await harness.block('products', 'held');
    const write = harness.start('POST', '/_bulk', { body: bulkOf([['products', 'held'], ['products', 'free']]), headers: NDJSON, priority: 'background' });
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS);
    await blocker.release();
    await vi.runAllTimersAsync();
    await write.done;
    const answer = write.res.json();
    expect(answer.items.map((item: Record<string, { _id: string; status: number }>) => [item.index!._id, item.index!.status])).toEqual([
      ['held', 201],
      ['free', 201],
    ]);
    expect(answer.errors).toBe(false);
    expect(harness.deadLetters.records).toHaveLength(0);
    expect(harness.engine.activity()).toEqual({ held: 0, waiting: 0 });
  });

  it('gives a foreground bulk a single round, whatever the retry count', async () => {
    harness = withRetries(3);
    await harness.block('products', 'held');
    const write = harness.start('POST', '/_bulk', { body: bulkOf([['products', 'held'], ['products', 'free']]), headers: NDJSON, priority: 'foreground' });
    await vi.runAllTimersAsync();
    await write.done;
    expect(write.res.json().items.map((item: Record<string, { status: number }>) => item.index!.status)).toEqual([429, 201]);
    expect(write.res.headers['x-dead-letter-id']).toBeUndefined();
    expect(harness.deadLetters.records).toHaveLength(0);
    expect(harness.reports.map((report) => [report.outcome, report.attempt])).toEqual([['timeout', 1]]);
  });

  it('stops a background bulk whose client hangs up during the backoff', async () => {
    harness = withRetries(2);
    await harness.block('products', 'held');
    const write = harness.start('POST', '/_bulk', { body: bulkOf([['products', 'held']]), headers: NDJSON, priority: 'background' });
    await vi.advanceTimersByTimeAsync(TIMEOUT_MS);
    write.hangUp();
    await write.done;
    expect(harness.forwarder.calls).toHaveLength(0);
    expect(harness.engine.activity()).toEqual({ held: 1, waiting: 0 });
    expect(harness.reports.map((report) => report.outcome)).toEqual(['retried', 'aborted']);
  });
});
