import { describe, expect, it } from 'vitest';
import { checkBulkContentType } from '../../../src/classify/content-type.js';
import { statusFor } from '../../../src/errors/error-codes.js';
import { ProxyError } from '../../../src/errors/proxy-error.js';

describe('checkBulkContentType', () => {
  it.each([
    ['application/json', { mediaType: 'application/json', compatibleWith: null }],
    ['application/x-ndjson', { mediaType: 'application/x-ndjson', compatibleWith: null }],
    ['Application/JSON; charset=UTF-8', { mediaType: 'application/json', compatibleWith: null }],
    ['application/x-ndjson;charset="utf-8"', { mediaType: 'application/x-ndjson', compatibleWith: null }],
    ['application/vnd.elasticsearch+json;compatible-with=8', { mediaType: 'application/vnd.elasticsearch+json', compatibleWith: 8 }],
    ['application/vnd.elasticsearch+x-ndjson; compatible-with=9', { mediaType: 'application/vnd.elasticsearch+x-ndjson', compatibleWith: 9 }],
    ['application/vnd.elasticsearch+x-ndjson; compatible-with=7; charset=utf-8', { mediaType: 'application/vnd.elasticsearch+x-ndjson', compatibleWith: 7 }],
    // The vendor types take `\d+` (XContentType's VERSION_PATTERN), read as a byte: leading zeros are fine.
    ['application/vnd.elasticsearch+x-ndjson; compatible-with=0007', { mediaType: 'application/vnd.elasticsearch+x-ndjson', compatibleWith: 7 }],
  ])('accepts %s', (header, expected) => {
    expect(checkBulkContentType(header, 10)).toEqual(expected);
  });

  it('skips the check for an empty body (Elasticsearch does too, then asks for a body)', () => {
    expect(checkBulkContentType(undefined, 0)).toBeNull();
  });

  it('answers 406 like Elasticsearch for a missing header', () => {
    expect(errorOf(undefined)).toMatchObject({ code: 'UNSUPPORTED_CONTENT_TYPE', message: 'Content-Type header is missing' });
    expect(statusFor('UNSUPPORTED_CONTENT_TYPE')).toBe(406);
  });

  it.each([
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/yaml',
    'application/smile',
    'application/cbor',
    'application/json; charset=iso-8859-1',
    'application/json; compatible-with=8',
    'application/vnd.elasticsearch+json',
    'application/vnd.elasticsearch+json; compatible-with=x',
    'application/x-ndjson; foo=bar',
  ])('answers 406 for %s', (header) => {
    expect(errorOf(header)).toMatchObject({ code: 'UNSUPPORTED_CONTENT_TYPE', message: `Content-Type header [${header}] is not supported` });
  });

  it.each(['json', 'application/', '/json', 'application/json/x', 'application/json; charset', 'application/json; =x', 'a b/c'])(
    'answers 400 for the malformed header %s',
    (header) => {
      expect(errorOf(header)).toMatchObject({ code: 'BAD_REQUEST', message: 'Invalid media-type value on headers [Content-Type]' });
    },
  );
});

function errorOf(header: string | undefined): ProxyError {
  try {
    checkBulkContentType(header, 10);
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error('expected an error');
}
