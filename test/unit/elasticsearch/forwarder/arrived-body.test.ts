import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { withArrivedBody } from '../../../../src/elasticsearch/forwarder/arrived-body.js';

function streamWith(...chunks: string[]): PassThrough {
  const stream = new PassThrough();
  for (const chunk of chunks) stream.write(chunk);
  return stream;
}

describe('a streamed body that has already arrived', () => {
  it('is forwarded as the bytes the client declared', async () => {
    const request = { method: 'POST', url: '/i/_search', rawHeaders: ['Content-Length', '12'], body: streamWith('{"query":', '{}}') };
    const forwarded = await withArrivedBody(request);
    expect(Buffer.isBuffer(forwarded.body) && forwarded.body.toString()).toBe('{"query":{}}');
  });

  it('stays a stream while part of it is still on its way, or when it is chunked', async () => {
    const partial = { method: 'POST', url: '/', rawHeaders: ['content-length', '20'], body: streamWith('{"query":') };
    expect(await withArrivedBody(partial)).toBe(partial);
    expect(partial.body.readableLength).toBe(9);
    const chunked = { method: 'POST', url: '/', rawHeaders: ['Transfer-Encoding', 'chunked'], body: streamWith('{}') };
    expect(await withArrivedBody(chunked)).toBe(chunked);
  });
});
