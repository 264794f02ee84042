import { describe, expect, it } from 'vitest';
import { rawWithoutHopByHop } from '../../../src/elasticsearch/hop-by-hop-headers.js';
import { upstreamHostOf } from '../../../src/elasticsearch/forwarder/host-pool.js';
import { upstreamRequestHeaders } from '../../../src/elasticsearch/forwarder/upstream-headers.js';

const HOST = upstreamHostOf(new URL('http://es-1:9200'));

describe('hop-by-hop headers (RFC 9110 §7.6.1)', () => {
  it('drops the fixed list and the names listed in Connection, keeps the rest in order and case', () => {
    const raw = [
      'Connection', 'keep-alive, X-Secret-Hop',
      'X-Secret-Hop', '1',
      'Keep-Alive', 'timeout=5',
      'Proxy-Connection', 'keep-alive',
      'TE', 'trailers',
      'Trailer', 'x',
      'Transfer-Encoding', 'chunked',
      'Upgrade', 'h2c',
      'Authorization', 'Basic abc',
      'x-opaque-id', 'id',
    ];
    expect(rawWithoutHopByHop(raw)).toEqual(['Authorization', 'Basic abc', 'x-opaque-id', 'id']);
  });

  it('keeps repeated raw headers such as set-cookie in order, and drops the names asked for', () => {
    const raw = ['Set-Cookie', 'a=1', 'Connection', 'close', 'Set-Cookie', 'b=2', 'Content-Length', '3'];
    expect(rawWithoutHopByHop(raw, ['content-length'])).toEqual(['Set-Cookie', 'a=1', 'Set-Cookie', 'b=2']);
  });
});

describe('upstream request headers', () => {
  it('names the upstream in Host, drops Expect and the proxy\'s own headers, and sizes a held body', () => {
    const body = Buffer.from('{"a":1}');
    const rawHeaders = ['Host', 'proxy:9201', 'Expect', '100-continue', 'Transfer-Encoding', 'chunked', 'X-Lock-Type', 'bg', 'X-Opaque-Id', 'o'];
    expect(upstreamRequestHeaders({ method: 'POST', url: '/', body, rawHeaders, dropHeaders: ['x-lock-type'] }, HOST)).toEqual({
      headers: ['X-Opaque-Id', 'o', 'Host', 'es-1:9200', 'Content-Length', '7'],
      streamsBody: false,
    });
    expect(upstreamRequestHeaders({ method: 'GET', url: '/', body: Buffer.alloc(0), rawHeaders: [] }, HOST).headers).toEqual(['Host', 'es-1:9200']);
    expect(upstreamRequestHeaders({ method: 'POST', url: '/', body: Buffer.alloc(0), rawHeaders: ['content-length', '0'] }, HOST).headers).toEqual([
      'Host',
      'es-1:9200',
      'Content-Length',
      '0',
    ]);
  });

  it('keeps a streamed body\'s length; a chunked one goes without length (undici chunks it); no framing means no body', async () => {
    const { Readable } = await import('node:stream');
    const stream = (): InstanceType<typeof Readable> => Readable.from([]);
    expect(upstreamRequestHeaders({ method: 'PUT', url: '/', body: stream(), rawHeaders: ['Content-Length', '12'] }, HOST)).toEqual({
      headers: ['Host', 'es-1:9200', 'Content-Length', '12'],
      streamsBody: true,
    });
    expect(upstreamRequestHeaders({ method: 'POST', url: '/', body: stream(), rawHeaders: ['Transfer-Encoding', 'chunked'] }, HOST)).toEqual({
      headers: ['Host', 'es-1:9200'],
      streamsBody: true,
    });
    expect(upstreamRequestHeaders({ method: 'GET', url: '/', body: stream(), rawHeaders: [] }, HOST).streamsBody).toBe(false);
  });
});
