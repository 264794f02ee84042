import { describe, expect, it } from 'vitest';
import { PRESENTATION_PARAMS, withoutParams } from '../../../../src/elasticsearch/request-params.js';
import { lenientResponseOptionsOf, PLAIN_RESPONSE, responseOptionsOf } from '../../../../src/http/response-options/response-options.js';

describe('responseOptionsOf: pretty and error_trace as RestRequest.paramAsBoolean reads them', () => {
  it.each([
    ['/i/_doc/1', false],
    ['/i/_doc/1?pretty', true],
    ['/i/_doc/1?pretty=', true],
    ['/i/_doc/1?pretty=true', true],
    ['/i/_doc/1?pretty=false', false],
    ['/i/_doc/1?pretty=%20', false],
    ['/i/_doc/1?refresh=true&pretty&routing=x', true],
  ])('%s: pretty %s', (url, pretty) => {
    expect(responseOptionsOf(url).pretty).toBe(pretty);
  });

  it('refuses other values with the message Elasticsearch gives', () => {
    expect(() => responseOptionsOf('/i/_doc/1?pretty=yes')).toThrow('Failed to parse value [yes] as only [true] or [false] are allowed.');
    expect(() => responseOptionsOf('/_bulk?error_trace=1')).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    expect(responseOptionsOf('/_bulk?error_trace').errorTrace).toBe(true);
  });

  it('lenient reading falls back to a plain answer, as Elasticsearch answers a bad parameter without the parameters', () => {
    expect(lenientResponseOptionsOf('/_bulk?pretty=yes&filter_path=took')).toBe(PLAIN_RESPONSE);
    expect(lenientResponseOptionsOf(undefined)).toBe(PLAIN_RESPONSE);
    expect(lenientResponseOptionsOf('/_bulk?pretty').pretty).toBe(true);
  });

  it('no filter_path, or one of separators only, filters nothing', () => {
    expect(responseOptionsOf('/_bulk')).toMatchObject({ includes: null, excludes: null });
    expect(responseOptionsOf('/_bulk?filter_path=')).toMatchObject({ includes: null, excludes: null });
    expect(responseOptionsOf('/_bulk?filter_path=,,')).toMatchObject({ includes: null, excludes: null });
  });
});

describe('withoutParams: the sub-bulk URL without the presentation parameters', () => {
  it.each([
    ['/_bulk?filter_path=items.*.error&pretty', '/_bulk'],
    ['/p/_bulk?refresh=wait_for&filter_path=took&routing=a%2Cb&pretty=true', '/p/_bulk?refresh=wait_for&routing=a%2Cb'],
    ['/_bulk?filter%5Fpath=took&timeout=1m', '/_bulk?timeout=1m'],
    ['/_bulk?error_trace=true&human', '/_bulk?error_trace=true&human'],
    ['/_bulk', '/_bulk'],
    ['/_bulk?', '/_bulk'],
  ])('%s → %s', (url, expected) => {
    expect(withoutParams(url, PRESENTATION_PARAMS)).toBe(expected);
  });
});
