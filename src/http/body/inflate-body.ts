import { createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import type { Transform } from 'node:stream';
import { ProxyError } from '../../errors/proxy-error.js';
import type { ContentCoding } from './content-coding.js';

/**
 * Output chunk of the inflater: how far past the limit a body can inflate before it is stopped,
 * and how much work each hop to the thread pool does (a larger chunk means fewer hops per body).
 */
export const INFLATE_CHUNK_BYTES = 64 * 1024;

/**
 * Inflates a compressed request body with a running count of the bytes it yields: past `maxBytes`
 * the inflater is destroyed at once and the promise rejects with INFLATED_BODY_TOO_LARGE — a small
 * body that expands enormously (a zip bomb) costs at most `maxBytes` plus one chunk of memory,
 * never its whole expansion. A body that is not valid for its coding (bad header, bad checksum,
 * cut short) rejects with CORRUPT_COMPRESSED_BODY. An empty body stays empty, as in Netty, which
 * has no bytes to decode then.
 */
export function inflateBody(compressed: Buffer, coding: ContentCoding, maxBytes: number): Promise<Buffer> {
  if (compressed.length === 0) return Promise.resolve(compressed);
  const inflater = inflaterFor(compressed, coding);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let inflated = 0;
    inflater.on('data', (chunk: Buffer) => {
      inflated += chunk.length;
      if (inflated > maxBytes) {
        inflater.destroy();
        reject(tooLarge(coding, compressed.length, inflated, maxBytes));
        return;
      }
      chunks.push(chunk);
    });
    inflater.once('end', () => resolve(Buffer.concat(chunks, inflated)));
    inflater.once('error', (error) => reject(corrupt(coding, error)));
    inflater.end(compressed);
  });
}

function inflaterFor(compressed: Buffer, coding: ContentCoding): Transform {
  const options = { chunkSize: INFLATE_CHUNK_BYTES };
  if (coding === 'gzip') return createGunzip(options);
  return looksLikeZlib(compressed) ? createInflate(options) : createInflateRaw(options);
}

/**
 * `deflate` is sent both zlib-wrapped (RFC 1950, as the HTTP spec means it) and raw (RFC 1951, as
 * some clients send it). Netty's JdkZlibDecoder, behind Elasticsearch's HTTP layer, tells them
 * apart by the first two bytes read as a signed 16-bit header: a deflate method with a 32 KiB
 * window (0x78..) and a header check divisible by 31. The same test here takes the same bodies.
 */
function looksLikeZlib(body: Buffer): boolean {
  if (body.length < 2) return false;
  const header = body.readInt16BE(0);
  return (header & 0x7800) === 0x7800 && header % 31 === 0;
}

function tooLarge(coding: ContentCoding, compressedBytes: number, inflatedBytes: number, maxBytes: number): ProxyError {
  return new ProxyError(
    'INFLATED_BODY_TOO_LARGE',
    `request body of ${compressedBytes} bytes (Content-Encoding [${coding}]) inflates past proxy.max.body.bytes [${maxBytes}]`,
    { meta: { coding, compressedBytes, inflatedBytes, maxBytes } },
  );
}

function corrupt(coding: ContentCoding, error: Error): ProxyError {
  return new ProxyError('CORRUPT_COMPRESSED_BODY', `request body is not valid [${coding}] content: ${error.message}`, {
    cause: error,
    meta: { coding },
  });
}
