import { describe, expect, it } from 'vitest';
import { refusalAnswerFor, refusalFor } from '../../../src/auth/refusal-answer.js';
import type { UpstreamResponse } from '../../../src/elasticsearch/upstream-forwarder.js';

const BODY = JSON.stringify({
  error: { type: 'security_exception', reason: 'unable to authenticate user [alice] for REST request [/_security/_authenticate]' },
  status: 401,
});

const REFUSED: UpstreamResponse = {
  status: 401,
  headers: {},
  rawHeaders: ['WWW-Authenticate', 'Basic realm="security", charset="UTF-8"', 'WWW-Authenticate', 'ApiKey', 'content-length', String(BODY.length), 'Connection', 'keep-alive', 'X-elastic-product', 'Elasticsearch'],
  body: Buffer.from(BODY),
  upstreamHost: 'es',
};

describe('refusalAnswerFor: a cached refusal, ready to write', () => {
  it('names the write’s URI as refusalFor does, escaped for JSON, with the framing headers left out', () => {
    for (const url of ['/idx/_doc/1', '/idx/_doc/a"b\\c', '/idx/_doc/\u0001?x=é']) {
      const answer = refusalAnswerFor(url, REFUSED);
      expect(answer.body).toBe(refusalFor(url, REFUSED).body.toString('utf8'));
      expect((JSON.parse(answer.body) as { error: { reason: string } }).error.reason).toBe(`unable to authenticate user [alice] for REST request [${url}]`);
      expect(answer.status).toBe(401);
      expect(answer.headers).toEqual(['WWW-Authenticate', 'Basic realm="security", charset="UTF-8"', 'WWW-Authenticate', 'ApiKey', 'X-elastic-product', 'Elasticsearch']);
    }
  });
});
