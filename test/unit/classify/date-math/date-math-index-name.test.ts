import { describe, expect, it } from 'vitest';
import { DateMathError } from '../../../../src/classify/date-math/date-math-error.js';
import { resolveDateMathName } from '../../../../src/classify/date-math/date-math-index-name.js';

/**
 * Expected names computed with java.time on JDK 17 (`ZonedDateTime` math as JavaDateMathParser.parseMath
 * does it, `DateTimeFormatter.ofPattern(pattern, Locale.ROOT).withZone(zone)`), at instants around a
 * day's end, a daylight-saving change (Paris 2024-03-31, New York 2024-11-03) and leap days.
 */
const JAVA_TIME: readonly (readonly [number, string, string, string, string])[] = [
  [1796428799999, '', 'Z', "uuuu.MM.dd", '2026.12.04'],
  [1796428799999, '/d', 'Z', "uuuu.MM.dd", '2026.12.04'],
  [1796428799999, '-1d/M', 'Z', "uuuu.MM.dd", '2026.12.01'],
  [1796428799999, '+1M', 'Z', "yyyy.MM.dd", '2027.01.04'],
  [1796428799999, '/w', 'Z', "yyyy.MM.dd", '2026.11.30'],
  [1796428799999, '/y', 'Z', "yyyy-MM-dd'T'HH:mm:ss.SSS", '2026-01-01T00:00:00.000'],
  [1796428799999, '/d', '+01:00', "yyyy.MM.dd HH", '2026.12.05 00'],
  [1796428799999, '/d', '-08:00', "yyyy.MM.dd", '2026.12.04'],
  [1796428799999, '/d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2026.12.05 00:00'],
  [1796428799999, '+2h/h', 'America/New_York', "yyyy.MM.dd.HH", '2026.12.04.20'],
  [1796428799999, '-30m/m', 'Asia/Kolkata', "yy.M.d H:m:s", '26.12.5 4:59:0'],
  [1796428799999, '+1d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2026.12.06 00:59'],
  [1796428799999, '-1y/M', 'Australia/Sydney', "uuuu.MM", '2025.12'],
  [1796428799999, '/M+1M-1d', 'Z', "uuuu.MM.dd", '2026.12.31'],
  [1796428799999, '+1s/s', 'Z', "HH.mm.ss.S", '00.00.00.0'],
  [1796428800000, '', 'Z', "uuuu.MM.dd", '2026.12.05'],
  [1796428800000, '/d', 'Z', "uuuu.MM.dd", '2026.12.05'],
  [1796428800000, '-1d/M', 'Z', "uuuu.MM.dd", '2026.12.01'],
  [1796428800000, '+1M', 'Z', "yyyy.MM.dd", '2027.01.05'],
  [1796428800000, '/w', 'Z', "yyyy.MM.dd", '2026.11.30'],
  [1796428800000, '/y', 'Z', "yyyy-MM-dd'T'HH:mm:ss.SSS", '2026-01-01T00:00:00.000'],
  [1796428800000, '/d', '+01:00', "yyyy.MM.dd HH", '2026.12.05 00'],
  [1796428800000, '/d', '-08:00', "yyyy.MM.dd", '2026.12.04'],
  [1796428800000, '/d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2026.12.05 00:00'],
  [1796428800000, '+2h/h', 'America/New_York', "yyyy.MM.dd.HH", '2026.12.04.21'],
  [1796428800000, '-30m/m', 'Asia/Kolkata', "yy.M.d H:m:s", '26.12.5 5:0:0'],
  [1796428800000, '+1d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2026.12.06 01:00'],
  [1796428800000, '-1y/M', 'Australia/Sydney', "uuuu.MM", '2025.12'],
  [1796428800000, '/M+1M-1d', 'Z', "uuuu.MM.dd", '2026.12.31'],
  [1796428800000, '+1s/s', 'Z', "HH.mm.ss.S", '00.00.01.0'],
  [1711846800000, '', 'Z', "uuuu.MM.dd", '2024.03.31'],
  [1711846800000, '/d', 'Z', "uuuu.MM.dd", '2024.03.31'],
  [1711846800000, '-1d/M', 'Z', "uuuu.MM.dd", '2024.03.01'],
  [1711846800000, '+1M', 'Z', "yyyy.MM.dd", '2024.04.30'],
  [1711846800000, '/w', 'Z', "yyyy.MM.dd", '2024.03.25'],
  [1711846800000, '/y', 'Z', "yyyy-MM-dd'T'HH:mm:ss.SSS", '2024-01-01T00:00:00.000'],
  [1711846800000, '/d', '+01:00', "yyyy.MM.dd HH", '2024.03.31 00'],
  [1711846800000, '/d', '-08:00', "yyyy.MM.dd", '2024.03.30'],
  [1711846800000, '/d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2024.03.31 00:00'],
  [1711846800000, '+2h/h', 'America/New_York', "yyyy.MM.dd.HH", '2024.03.30.23'],
  [1711846800000, '-30m/m', 'Asia/Kolkata', "yy.M.d H:m:s", '24.3.31 6:0:0'],
  [1711846800000, '+1d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2024.04.01 03:00'],
  [1711846800000, '-1y/M', 'Australia/Sydney', "uuuu.MM", '2023.03'],
  [1711846800000, '/M+1M-1d', 'Z', "uuuu.MM.dd", '2024.03.31'],
  [1711846800000, '+1s/s', 'Z', "HH.mm.ss.S", '01.00.01.0'],
  [1730595600000, '', 'Z', "uuuu.MM.dd", '2024.11.03'],
  [1730595600000, '/d', 'Z', "uuuu.MM.dd", '2024.11.03'],
  [1730595600000, '-1d/M', 'Z', "uuuu.MM.dd", '2024.11.01'],
  [1730595600000, '+1M', 'Z', "yyyy.MM.dd", '2024.12.03'],
  [1730595600000, '/w', 'Z', "yyyy.MM.dd", '2024.10.28'],
  [1730595600000, '/y', 'Z', "yyyy-MM-dd'T'HH:mm:ss.SSS", '2024-01-01T00:00:00.000'],
  [1730595600000, '/d', '+01:00', "yyyy.MM.dd HH", '2024.11.03 00'],
  [1730595600000, '/d', '-08:00', "yyyy.MM.dd", '2024.11.02'],
  [1730595600000, '/d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2024.11.03 00:00'],
  [1730595600000, '+2h/h', 'America/New_York', "yyyy.MM.dd.HH", '2024.11.02.23'],
  [1730595600000, '-30m/m', 'Asia/Kolkata', "yy.M.d H:m:s", '24.11.3 6:0:0'],
  [1730595600000, '+1d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2024.11.04 02:00'],
  [1730595600000, '-1y/M', 'Australia/Sydney', "uuuu.MM", '2023.11'],
  [1730595600000, '/M+1M-1d', 'Z', "uuuu.MM.dd", '2024.11.30'],
  [1730595600000, '+1s/s', 'Z', "HH.mm.ss.S", '01.00.01.0'],
  [1709251199000, '', 'Z', "uuuu.MM.dd", '2024.02.29'],
  [1709251199000, '/d', 'Z', "uuuu.MM.dd", '2024.02.29'],
  [1709251199000, '-1d/M', 'Z', "uuuu.MM.dd", '2024.02.01'],
  [1709251199000, '+1M', 'Z', "yyyy.MM.dd", '2024.03.29'],
  [1709251199000, '/w', 'Z', "yyyy.MM.dd", '2024.02.26'],
  [1709251199000, '/y', 'Z', "yyyy-MM-dd'T'HH:mm:ss.SSS", '2024-01-01T00:00:00.000'],
  [1709251199000, '/d', '+01:00', "yyyy.MM.dd HH", '2024.03.01 00'],
  [1709251199000, '/d', '-08:00', "yyyy.MM.dd", '2024.02.29'],
  [1709251199000, '/d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2024.03.01 00:00'],
  [1709251199000, '+2h/h', 'America/New_York', "yyyy.MM.dd.HH", '2024.02.29.20'],
  [1709251199000, '-30m/m', 'Asia/Kolkata', "yy.M.d H:m:s", '24.3.1 4:59:0'],
  [1709251199000, '+1d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2024.03.02 00:59'],
  [1709251199000, '-1y/M', 'Australia/Sydney', "uuuu.MM", '2023.03'],
  [1709251199000, '/M+1M-1d', 'Z', "uuuu.MM.dd", '2024.02.29'],
  [1709251199000, '+1s/s', 'Z', "HH.mm.ss.S", '00.00.00.0'],
  [1582934400000, '', 'Z', "uuuu.MM.dd", '2020.02.29'],
  [1582934400000, '/d', 'Z', "uuuu.MM.dd", '2020.02.29'],
  [1582934400000, '-1d/M', 'Z', "uuuu.MM.dd", '2020.02.01'],
  [1582934400000, '+1M', 'Z', "yyyy.MM.dd", '2020.03.29'],
  [1582934400000, '/w', 'Z', "yyyy.MM.dd", '2020.02.24'],
  [1582934400000, '/y', 'Z', "yyyy-MM-dd'T'HH:mm:ss.SSS", '2020-01-01T00:00:00.000'],
  [1582934400000, '/d', '+01:00', "yyyy.MM.dd HH", '2020.02.29 00'],
  [1582934400000, '/d', '-08:00', "yyyy.MM.dd", '2020.02.28'],
  [1582934400000, '/d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2020.02.29 00:00'],
  [1582934400000, '+2h/h', 'America/New_York', "yyyy.MM.dd.HH", '2020.02.28.21'],
  [1582934400000, '-30m/m', 'Asia/Kolkata', "yy.M.d H:m:s", '20.2.29 5:0:0'],
  [1582934400000, '+1d', 'Europe/Paris', "yyyy.MM.dd HH:mm", '2020.03.01 01:00'],
  [1582934400000, '-1y/M', 'Australia/Sydney', "uuuu.MM", '2019.02'],
  [1582934400000, '/M+1M-1d', 'Z', "uuuu.MM.dd", '2020.02.29'],
  [1582934400000, '+1s/s', 'Z', "HH.mm.ss.S", '00.00.01.0'],
];

function failure(name: string, now = 0): DateMathError {
  try {
    resolveDateMathName(name, now);
  } catch (error) {
    if (error instanceof DateMathError) return error;
    throw error;
  }
  throw new Error(`[${name}] resolved`);
}

describe('resolveDateMathName: as java.time computes it', () => {
  it.each(JAVA_TIME)('at %i, now%s in %s as %s is %s', (now, math, zone, pattern, expected) => {
    expect(resolveDateMathName(`<x-{now${math}{${pattern}|${zone}}}>`, now)).toBe(`x-${expected}`);
  });
});

/** Elasticsearch: server/src/test/java/org/elasticsearch/cluster/metadata/DateMathExpressionResolverTests.java */
describe('resolveDateMathName: Elasticsearch’s own cases', () => {
  const now = Date.UTC(2026, 11, 4, 13, 14, 15);

  it('returns a name that is not `<…>` as it is', () => {
    for (const name of ['abcdefghij', '*', '<open', 'close>', 'idx-{now}']) expect(resolveDateMathName(name, now)).toBe(name);
  });

  it.each([
    ['<.marvel-{now}>', '.marvel-2026.12.04'],
    ['<logstash-{now}>', 'logstash-2026.12.04'],
    ['<-before-inner-{now}>', '-before-inner-2026.12.04'],
    ['<wild*card-{now}*>', 'wild*card-2026.12.04*'],
    ['<.marvel-test>', '.marvel-test'],
    ['<.text1-{now/d}-text2-{now/M}>', '.text1-2026.12.04-text2-2026.12.01'],
    ['<.marvel-{now/d{yyyy.MM.dd}}>', '.marvel-2026.12.04'],
    ['<.mar\\{v\\}el-{now/d}>', '.mar{v}el-2026.12.04'],
    ["<.marvel-{now/d{'\\{year\\}'yyyy}}>", '.marvel-{year}2026'],
    ['<a\\\\b-{now/d}>', 'a\\b-2026.12.04'],
    ['<logs-{now/d{yyyy.MM.dd|+01:00}}>', 'logs-2026.12.04'],
    ['<logs-{now/d{yyyy.MM.dd|+12:00}}>', 'logs-2026.12.05'],
    ['<logs-{now-1d/d}>', 'logs-2026.12.03'],
    ["<logs-{now{yyyy.MM.dd'T'HH}}>", 'logs-2026.12.04T13'],
  ])('%s at 2026-12-04T13:14:15Z is %s', (name, expected) => {
    expect(resolveDateMathName(name, now)).toBe(expected);
  });

  it.each([
    ['<.mar}vel-{now/d}>', 'invalid character at position [5]'],
    ['<.marvel-{now/d{}>', 'date math placeholder is open ended'],
    ['<.marvel-{now/d{}}>', 'missing date format'],
    ['<.marvel-{now/d>', 'date math placeholder is open ended'],
    ['<.marvel-{now/d{yyyy}x}>', 'missing closing `}` for date math format'],
    ['<.marvel-{now/d{yy{yy}}}>', 'invalid character in placeholder at position'],
    ['<>', 'nothing captured'],
    ['<{}>', 'cannot parse empty date'],
    ['<x-{now*1d}>', 'operator not supported for date math [*1d]'],
    ['<x-{now-1}>', 'truncated date math [-1]'],
    ['<x-{now-}>', 'truncated date math [-]'],
    ['<x-{now/2d}>', 'rounding `/` can only be used on single unit types [/2d]'],
    ['<x-{now+1q}>', 'unit [q] not supported for date math [1q]'],
  ])('refuses %s as Elasticsearch does (%s)', (name, message) => {
    const error = failure(name);
    expect(error.kind).toBe('invalid');
    expect(error.message).toContain(message);
    expect(error.toProxyError()).toMatchObject({ code: 'DATE_MATH_INVALID' });
  });

  it('names the expression as Elasticsearch does, with the closing `>`', () => {
    expect(failure('<.mar}vel-{now/d}>').message).toBe(
      'invalid dynamic name expression [.mar}vel-{now/d}>]. invalid character at position [5]. `{` and `}` are reserved characters and should be escaped when used as part of the index name using `\\` (e.g. `\\{text\\}`)',
    );
  });
});

describe('resolveDateMathName: what the proxy refuses rather than guesses', () => {
  it.each([
    ['<x-{now/d{YYYY.ww}}>', 'uses [YYYY]'],
    ['<x-{now/d{MMM}}>', 'uses [MMM]'],
    ['<x-{now/d{date}}>', 'which the proxy does not evaluate'],
    ['<x-{now/d{yyyy[MM]}}>', 'reserved character [[]'],
    ['<x-{2024.01.01||+1d}>', 'does not start with [now]'],
    ['<x-{now/d{yyyy|Mars/Olympus}}>', 'time zone [Mars/Olympus]'],
    ['<x-{now+9999y}>', 'outside 1 to 9999'],
  ])('%s (%s)', (name, message) => {
    const error = failure(name, Date.UTC(2026, 11, 4));
    expect(error.kind).toBe('unsupported');
    expect(error.message).toContain(message);
    expect(error.toProxyError()).toMatchObject({ code: 'DATE_MATH_UNSUPPORTED' });
  });
});
