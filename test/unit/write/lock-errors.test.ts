import { describe, expect, it } from 'vitest';
import { lockWaitTimeout, retryAfterSeconds } from '../../../src/write/lock-errors.js';
import { elasticsearchErrorBody } from '../../../src/http/elasticsearch-error.js';

describe('lock errors as clients see them', () => {
  it.each([
    [0, 1],
    [999, 1],
    [1_000, 1],
    [1_001, 2],
    [30_000, 30],
  ])('asks a client to retry after a %i ms lock timeout in %s s', (timeoutMs, seconds) => {
    expect(retryAfterSeconds(timeoutMs)).toBe(seconds);
  });

  it('names the document as Elasticsearch prints it in a 429 lock_wait_timeout_exception', () => {
    expect(elasticsearchErrorBody(lockWaitTimeout({ index: 'products', id: 'a/b' }, 250))).toEqual({
      error: {
        root_cause: [{ type: 'lock_wait_timeout_exception', reason: 'lock wait for document [products][a/b] timed out after 250ms' }],
        type: 'lock_wait_timeout_exception',
        reason: 'lock wait for document [products][a/b] timed out after 250ms',
      },
      status: 429,
    });
  });
});
