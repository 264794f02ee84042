import { gunzipSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { answerCodingFor, encodedAnswer } from '../../../../src/http/body/answer-compression.js';

describe('answerCodingFor (Netty HttpContentCompressor rule)', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['identity', null],
    ['br', null],
    ['gzip', 'gzip'],
    ['gzip,deflate', 'gzip'],
    ['deflate, gzip', 'gzip'],
    ['deflate', 'deflate'],
    ['gzip;q=0.5, deflate;q=0.8', 'deflate'],
    ['gzip;q=0', null],
    ['gzip;q=0, *', null],
    ['*', 'gzip'],
    ['br, *;q=0.1', 'gzip'],
    ['GZIP ; Q=1', 'gzip'],
    ['gzip;q=abc', null],
  ] as const)('%j → %j', (header, coding) => {
    expect(answerCodingFor(header)).toBe(coding);
  });
});

describe('encodedAnswer', () => {
  const payload = Buffer.from(JSON.stringify({ took: 3, errors: false, items: Array.from({ length: 50 }, (_, n) => ({ index: { _id: String(n), status: 201 } })) }));

  it('compresses with the coding the client accepts and says so', () => {
    const gzipped = encodedAnswer(payload, 'gzip, deflate');
    expect(gzipped.headers).toEqual({ 'content-encoding': 'gzip' });
    expect(gunzipSync(gzipped.body)).toEqual(payload);
    const deflated = encodedAnswer(payload, 'deflate');
    expect(deflated.headers).toEqual({ 'content-encoding': 'deflate' });
    expect(inflateSync(deflated.body)).toEqual(payload);
  });

  it('leaves the answer as it is for a client that accepts no coding', () => {
    expect(encodedAnswer(payload, undefined)).toEqual({ body: payload, headers: {} });
    expect(encodedAnswer(payload, 'br')).toEqual({ body: payload, headers: {} });
  });
});
