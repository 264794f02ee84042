import type { IncomingMessage } from 'node:http';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { backOff, giveUp, retriesAfterTimeout } from '../../../src/write/background-retry.js';
import type { GivenUpWrite } from '../../../src/write/dead-letter.js';
import type { WritePathDeps } from '../../../src/write/write-path-deps.js';
import { testSettings } from '../../support/test-settings.js';
import { RecordingDeadLetters } from './write-harness.js';

/** The one policy single writes and bulks share; the write path's own tests cover both through it. */
describe('the background retry and dead-letter policy', () => {
  const settings = testSettings({ elasticsearch: { requestRetryCount: 2 } });

  it('retries a background write exactly `elastic.request.retry.count` times, a foreground one never', () => {
    expect([1, 2, 3].map((attempt) => retriesAfterTimeout(settings, 'background', attempt))).toEqual([true, true, false]);
    expect([1, 2, 3].map((attempt) => retriesAfterTimeout(settings, 'foreground', attempt))).toEqual([false, false, false]);
  });

  it('reports a client gone during the backoff instead of throwing', async () => {
    const gone = new AbortController();
    gone.abort(new Error('client closed the connection'));
    await expect(backOff(1, gone.signal)).resolves.toBe(false);
  });

  const source = { req: { method: 'PUT', url: '/products/_doc/1', headers: {} } as IncomingMessage, inflatedFrom: null, requestId: 'req-1' };
  const write = (priority: GivenUpWrite['priority']): GivenUpWrite => ({
    body: Buffer.from('{}'),
    priority,
    keys: [{ index: 'products', id: '1' }],
    attemptTimes: [Date.now()],
    lastError: { code: 'LOCK_TIMEOUT', message: 'timed out' },
  });
  const depsWith = (deadLetters: RecordingDeadLetters): WritePathDeps =>
    ({ deadLetters, logger: pino({ level: 'silent' }) }) as unknown as WritePathDeps;

  it('dead-letters a background write given up on and names the record', async () => {
    const deadLetters = new RecordingDeadLetters();
    const givenUp = await giveUp(depsWith(deadLetters), source, write('background'));
    expect(deadLetters.records).toHaveLength(1);
    expect(givenUp).toEqual({ outcome: 'dead_lettered', deadLetterId: deadLetters.records[0]!.id });
  });

  it('never records a foreground write, and reports a queue that could not be written as a plain timeout', async () => {
    const deadLetters = new RecordingDeadLetters();
    expect(await giveUp(depsWith(deadLetters), source, write('foreground'))).toEqual({ outcome: 'timeout', deadLetterId: null });
    deadLetters.failing = true;
    expect(await giveUp(depsWith(deadLetters), source, write('background'))).toEqual({ outcome: 'timeout', deadLetterId: null });
    expect(deadLetters.records).toHaveLength(0);
  });
});
