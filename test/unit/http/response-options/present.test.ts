import { describe, expect, it } from 'vitest';
import { presentedAnswer, presentedUpstreamError } from '../../../../src/http/response-options/present.js';
import { PLAIN_RESPONSE, responseOptionsOf } from '../../../../src/http/response-options/response-options.js';
import type { UpstreamResponse } from '../../../../src/elasticsearch/upstream-forwarder.js';

const upstream = (contentType: string, body: string): UpstreamResponse => ({
  status: 400,
  headers: { 'content-type': contentType },
  rawHeaders: ['Content-Type', contentType],
  body: Buffer.from(body),
  upstreamHost: 'http://es:9200',
});

describe('presentedAnswer', () => {
  it('passes the very bytes through when the request asked nothing', () => {
    const bytes = Buffer.from('{"took":1,  "items":[]}');
    expect(presentedAnswer(bytes, PLAIN_RESPONSE)).toBe(bytes);
    expect(presentedAnswer(bytes, responseOptionsOf('/_bulk?refresh=true'))).toBe(bytes);
    expect(presentedAnswer({ a: 1 }, PLAIN_RESPONSE).toString()).toBe('{"a":1}');
  });

  it('filters and pretty-prints what the proxy composed', () => {
    const answer = presentedAnswer(Buffer.from('{"took":1,"errors":false,"items":[]}'), responseOptionsOf('/_bulk?filter_path=errors&pretty'));
    expect(answer.toString()).toBe('{\n  "errors" : false\n}\n');
  });
});

describe('presentedUpstreamError', () => {
  it('pretty-prints a JSON error when asked, unfiltered', () => {
    const options = responseOptionsOf('/_bulk?pretty&filter_path=took');
    expect(presentedUpstreamError(upstream('application/json; charset=UTF-8', '{"status":400}'), options).body.toString()).toBe('{\n  "status" : 400\n}\n');
  });

  it('leaves anything else alone: no pretty asked, or a body that is not JSON', () => {
    const json = upstream('application/json', '{"status":400}');
    expect(presentedUpstreamError(json, responseOptionsOf('/_bulk?filter_path=took'))).toBe(json);
    const text = upstream('text/plain', 'Bad Request');
    expect(presentedUpstreamError(text, responseOptionsOf('/_bulk?pretty'))).toBe(text);
  });
});
