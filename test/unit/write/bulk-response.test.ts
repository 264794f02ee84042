import { describe, expect, it } from 'vitest';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { parseBulkResponse, renderBulkResponse } from '../../../src/write/bulk-response.js';

const answer = (value: unknown): Buffer => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('parseBulkResponse', () => {
  it('reads took, errors and the items of an Elasticsearch answer', () => {
    const items = [{ index: { _id: 'a', status: 201 } }, { delete: { _id: 'b', status: 404, result: 'not_found' } }];
    expect(parseBulkResponse(answer({ took: 7, errors: false, items }), 2)).toEqual({ took: 7, errors: false, items });
  });

  it.each([
    ['a body that is not JSON', '<html>502 Bad Gateway</html>', 2],
    ['an error answer instead of items', { error: { type: 'x' }, status: 500 }, 1],
    ['fewer items than were sent', { took: 1, errors: false, items: [{ index: { status: 201 } }] }, 2],
    ['an item that is not one action with its result', { took: 1, errors: false, items: [{ index: { status: 201 }, create: { status: 201 } }] }, 1],
    ['an item that is not an object', { took: 1, errors: false, items: ['created'] }, 1],
  ])('treats %s as an upstream fault (502)', (_case, body, expected) => {
    let thrown: unknown;
    try {
      parseBulkResponse(answer(body), expected);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProxyError);
    expect((thrown as ProxyError).code).toBe('UPSTREAM_RESET');
  });
});

describe('renderBulkResponse', () => {
  it('sets errors when any item carries an error, as Elasticsearch does', () => {
    const ok = { index: { _id: 'a', status: 201 } };
    const failed = { create: { _id: 'b', status: 409, error: { type: 'version_conflict_engine_exception', reason: 'exists' } } };
    expect(JSON.parse(renderBulkResponse(3, [ok, failed]).toString())).toEqual({ took: 3, errors: true, items: [ok, failed] });
    expect(JSON.parse(renderBulkResponse(3, [ok]).toString())).toEqual({ took: 3, errors: false, items: [ok] });
  });

  it('does not count a 404 delete without an error as a failure', () => {
    const notFound = { delete: { _id: 'a', status: 404, result: 'not_found' } };
    expect(JSON.parse(renderBulkResponse(1, [notFound]).toString()).errors).toBe(false);
  });
});
