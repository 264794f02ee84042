import { deflateSync, gzipSync } from 'node:zlib';
import type { ContentCoding } from './content-coding.js';

/** Elasticsearch's `http.compression_level` default. */
export const ANSWER_COMPRESSION_LEVEL = 3;

export interface EncodedAnswer {
  readonly body: Buffer;
  /** `content-encoding` when the body was compressed, nothing otherwise. */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * An answer the proxy composed, compressed as Elasticsearch compresses its own (`http.compression`,
 * on by default over plain HTTP, at level 3) for a client whose `Accept-Encoding` allows it.
 */
export function encodedAnswer(payload: Buffer, acceptEncoding: string | undefined): EncodedAnswer {
  const coding = answerCodingFor(acceptEncoding);
  if (coding === null) return { body: payload, headers: {} };
  const body = coding === 'gzip' ? gzipSync(payload, { level: ANSWER_COMPRESSION_LEVEL }) : deflateSync(payload, { level: ANSWER_COMPRESSION_LEVEL });
  return { body, headers: { 'content-encoding': coding } };
}

/**
 * The coding Netty's HttpContentCompressor (Elasticsearch's) picks from `Accept-Encoding`: the
 * highest q-value among gzip and deflate, gzip on a tie; with neither named, `*` above 0 means gzip;
 * nothing acceptable (or only codings Elasticsearch does not produce) means no compression.
 */
export function answerCodingFor(acceptEncoding: string | undefined): ContentCoding | null {
  if (acceptEncoding === undefined) return null;
  let gzip = -1;
  let deflate = -1;
  let star = -1;
  for (const part of acceptEncoding.split(',')) {
    const [name = '', ...parameters] = part.split(';');
    const coding = name.trim().toLowerCase();
    const q = qualityOf(parameters);
    if (coding === '*') star = q;
    else if (coding === 'gzip' || coding === 'x-gzip') gzip = Math.max(gzip, q);
    else if (coding === 'deflate') deflate = Math.max(deflate, q);
  }
  if (gzip > 0 || deflate > 0) return gzip >= deflate ? 'gzip' : 'deflate';
  return star > 0 && gzip === -1 ? 'gzip' : null;
}

/** The `q` parameter (RFC 9110 §12.4.2), 1 when absent; an unreadable one counts as 0. */
function qualityOf(parameters: readonly string[]): number {
  for (const parameter of parameters) {
    const [key = '', value = ''] = parameter.split('=');
    if (key.trim().toLowerCase() !== 'q') continue;
    const q = Number(value.trim());
    return Number.isFinite(q) && q >= 0 && q <= 1 ? q : 0;
  }
  return 1;
}
