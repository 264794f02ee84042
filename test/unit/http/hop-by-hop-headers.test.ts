import { describe, expect, it } from 'vitest';
import { rawWithoutHopByHop, withoutHopByHop } from '../../../src/http/hop-by-hop-headers.js';
import { upstreamHeaders } from '../../../src/http/upstream/upstream-attempt.js';

describe('hop-by-hop headers (RFC 9110 §7.6.1)', () => {
  it('drops the fixed list and the names listed in Connection, keeps the rest', () => {
    const kept = withoutHopByHop({
      connection: 'keep-alive, X-Secret-Hop',
      'x-secret-hop': '1',
      'keep-alive': 'timeout=5',
      'proxy-connection': 'keep-alive',
      te: 'trailers',
      trailer: 'x',
      'transfer-encoding': 'chunked',
      upgrade: 'h2c',
      authorization: 'Basic abc',
      'x-opaque-id': 'id',
    });
    expect(kept).toEqual({ authorization: 'Basic abc', 'x-opaque-id': 'id' });
  });

  it('keeps repeated raw headers such as set-cookie in order', () => {
    const raw = ['Set-Cookie', 'a=1', 'Connection', 'close', 'Set-Cookie', 'b=2', 'Transfer-Encoding', 'chunked'];
    expect(rawWithoutHopByHop(raw, { connection: 'close' })).toEqual(['Set-Cookie', 'a=1', 'Set-Cookie', 'b=2']);
  });

  it('names the upstream in Host, drops Expect, and sizes the buffered body', () => {
    const url = new URL('http://es-1:9200');
    const body = Buffer.from('{"a":1}');
    expect(upstreamHeaders({ method: 'POST', url: '/', body, headers: { host: 'proxy:9201', expect: '100-continue', 'transfer-encoding': 'chunked' } }, url)).toEqual({
      host: 'es-1:9200',
      'content-length': '7',
    });
    expect(upstreamHeaders({ method: 'GET', url: '/', body: Buffer.alloc(0), headers: {} }, url)).toEqual({ host: 'es-1:9200' });
    expect(upstreamHeaders({ method: 'POST', url: '/', body: Buffer.alloc(0), headers: { 'content-length': '0' } }, url)).toEqual({
      host: 'es-1:9200',
      'content-length': '0',
    });
  });
});
