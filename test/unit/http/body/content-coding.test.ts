import { describe, expect, it } from 'vitest';
import { contentCodingOf } from '../../../../src/http/body/content-coding.js';
import { ProxyError } from '../../../../src/errors/proxy-error.js';

describe('contentCodingOf', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['identity', null],
    ['gzip', 'gzip'],
    ['GZip', 'gzip'],
    [' x-gzip ', 'gzip'],
    ['deflate', 'deflate'],
    ['X-Deflate', 'deflate'],
  ] as const)('reads %j as %j, as Netty matches it', (header, coding) => {
    expect(contentCodingOf(header)).toBe(coding);
  });

  it.each(['br', 'zstd', 'compress', 'gzip, deflate', 'gzip,gzip', 'snappy'])('refuses %j with UNSUPPORTED_CONTENT_ENCODING (415) naming it', (header) => {
    let thrown: unknown;
    try {
      contentCodingOf(header);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProxyError);
    expect(thrown).toMatchObject({ code: 'UNSUPPORTED_CONTENT_ENCODING', message: expect.stringContaining(`[${header}]`) as unknown });
  });

  it('refuses codings repeated over several headers', () => {
    expect(() => contentCodingOf(['gzip', 'gzip'])).toThrow(/not supported/);
    expect(contentCodingOf(['gzip'])).toBe('gzip');
  });
});
