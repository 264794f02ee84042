import { describe, expect, it } from 'vitest';
import { parsePriority } from '../../../src/classify/priority-header.js';
import { ProxyError } from '../../../src/errors/proxy-error.js';

describe('parsePriority', () => {
  it.each([
    ['foreground', 'foreground'],
    ['background', 'background'],
    ['fg', 'foreground'],
    ['bg', 'background'],
    ['FOREGROUND', 'foreground'],
    ['Bg', 'background'],
    ['  fg \t', 'foreground'],
    ['bg, background', 'background'],
  ] as const)('reads %j as %s', (value, expected) => {
    expect(parsePriority(value, 'foreground', 'X-Lock-Type')).toBe(expected);
  });

  it('uses the default when the header is absent', () => {
    expect(parsePriority(undefined, 'background', 'X-Lock-Type')).toBe('background');
    expect(parsePriority(undefined, 'foreground', 'X-Lock-Type')).toBe('foreground');
  });

  it('accepts repeated headers that agree', () => {
    expect(parsePriority(['fg', 'Foreground'], 'background', 'X-Lock-Type')).toBe('foreground');
  });

  it.each([[''], ['  '], ['high'], ['fore ground'], ['fg;bg'], ['fg, bg'], ['1']])('refuses %j naming the header and values', (value) => {
    expectBadHeader(() => parsePriority(value, 'foreground', 'X-Lock-Type'), value);
  });

  it('refuses repeated headers that disagree', () => {
    expectBadHeader(() => parsePriority(['fg', 'bg'], 'foreground', 'X-Priority'), 'fg, bg', 'X-Priority');
    expectBadHeader(() => parsePriority([], 'foreground', 'X-Priority'), '', 'X-Priority');
  });
});

function expectBadHeader(run: () => unknown, shown: string, header = 'X-Lock-Type'): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProxyError);
    expect(error).toMatchObject({ code: 'BAD_LOCK_HEADER', meta: { header } });
    const message = (error as ProxyError).message;
    expect(message).toContain(`header [${header}]`);
    expect(message).toContain(`[${shown}]`);
    expect(message).toContain('[foreground], [background], [fg] and [bg]');
    return;
  }
  throw new Error('expected an error');
}
