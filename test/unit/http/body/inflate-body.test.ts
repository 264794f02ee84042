import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { INFLATE_CHUNK_BYTES, inflateBody } from '../../../../src/http/body/inflate-body.js';
import { ProxyError } from '../../../../src/errors/proxy-error.js';

const CONTENT = Buffer.from('{"index":{"_id":"1"}}\n{"v":1}\n'.repeat(1000));

async function failureOf(promise: Promise<unknown>): Promise<ProxyError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  if (!(error instanceof ProxyError)) throw new Error(`expected a ProxyError, got ${String(error)}`);
  return error;
}

describe('inflateBody', () => {
  it('inflates gzip, multi-member gzip, zlib-wrapped and raw deflate', async () => {
    expect(await inflateBody(gzipSync(CONTENT, { level: 1 }), 'gzip', 1 << 20)).toEqual(CONTENT);
    const twoMembers = Buffer.concat([gzipSync(CONTENT.subarray(0, 100)), gzipSync(CONTENT.subarray(100))]);
    expect(await inflateBody(twoMembers, 'gzip', 1 << 20)).toEqual(CONTENT);
    expect(await inflateBody(deflateSync(CONTENT), 'deflate', 1 << 20)).toEqual(CONTENT);
    expect(await inflateBody(deflateRawSync(CONTENT), 'deflate', 1 << 20)).toEqual(CONTENT);
  });

  it('leaves an empty body empty', async () => {
    expect((await inflateBody(Buffer.alloc(0), 'gzip', 10)).length).toBe(0);
  });

  it('takes a body that inflates to exactly the limit', async () => {
    expect((await inflateBody(gzipSync(CONTENT), 'gzip', CONTENT.length)).length).toBe(CONTENT.length);
  });

  it('stops a zip bomb at the limit: at most one chunk is inflated past it', async () => {
    // 64 MiB of zeros in a few tens of KiB; the limit is 1 MiB.
    const member = gzipSync(Buffer.alloc(16 << 20), { level: 9 });
    const bomb = Buffer.concat([member, member, member, member]);
    expect(bomb.length).toBeLessThan(200 * 1024);
    const limit = 1 << 20;
    const error = await failureOf(inflateBody(bomb, 'gzip', limit));
    expect(error.code).toBe('INFLATED_BODY_TOO_LARGE');
    expect(error.message).toContain('proxy.max.body.bytes [1048576]');
    const inflated = error.meta.inflatedBytes as number;
    expect(inflated).toBeGreaterThan(limit);
    expect(inflated).toBeLessThanOrEqual(limit + INFLATE_CHUNK_BYTES);
  });

  it('refuses corrupt and truncated bodies with CORRUPT_COMPRESSED_BODY naming the coding', async () => {
    const gzipped = gzipSync(CONTENT);
    const flipped = Buffer.from(gzipped);
    flipped[flipped.length - 6] = (flipped[flipped.length - 6] ?? 0) ^ 0xff;
    for (const [body, coding] of [
      [Buffer.from('not gzip at all'), 'gzip'],
      [gzipped.subarray(0, gzipped.length - 20), 'gzip'],
      [flipped, 'gzip'],
      [Buffer.from([0xff, 0xff, 0xff, 0xff]), 'deflate'],
    ] as const) {
      const error = await failureOf(inflateBody(body, coding, 1 << 20));
      expect(error.code).toBe('CORRUPT_COMPRESSED_BODY');
      expect(error.message).toContain(`[${coding}]`);
    }
  });
});
