import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../../src/errors/error-codes.js';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import { asProxyError, elasticsearchErrorBody } from '../../../src/http/elasticsearch-error.js';

describe('elasticsearchErrorBody', () => {
  const codes = Object.keys(ERROR_CODES).filter((code): code is ErrorCode => code in ERROR_CODES);
  it.each(codes)('renders %s with the status and type of the table', (code) => {
    const body = elasticsearchErrorBody(new ProxyError(code, 'why'));
    const { status, type } = ERROR_CODES[code];
    expect(body).toEqual({ error: { root_cause: [{ type, reason: 'why' }], type, reason: 'why' }, status });
  });

  it('turns anything else into an internal error without leaking its message', () => {
    const error = asProxyError(new Error('secret detail'));
    expect(error.code).toBe('INTERNAL');
    expect(error.message).not.toContain('secret');
  });
});
