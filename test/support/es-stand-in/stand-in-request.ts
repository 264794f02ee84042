import type { IncomingHttpHeaders } from 'node:http';

/** A request as the stand-in saw it, with the parts its handlers and test hooks need. */
export interface StandInRequest {
  readonly method: string;
  /** Raw path and query as received. */
  readonly url: string;
  /** Raw path split on `/`, then each segment percent-decoded (Elasticsearch's order). */
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** `index/id` of every document this request writes (concrete index); empty for reads. */
  readonly writeKeys: readonly string[];
}

export function splitPath(url: string): { segments: string[]; query: URLSearchParams } {
  const queryStart = url.indexOf('?');
  const rawPath = queryStart < 0 ? url : url.slice(0, queryStart);
  const rawQuery = queryStart < 0 ? '' : url.slice(queryStart + 1);
  const segments = rawPath
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => {
      // Node hands the request line over as latin1; raw UTF-8 bytes are re-read as UTF-8.
      const text = /[\u0080-\uffff]/.test(segment) ? Buffer.from(segment, 'latin1').toString('utf8') : segment;
      try {
        return decodeURIComponent(text);
      } catch {
        return text;
      }
    });
  return { segments, query: new URLSearchParams(rawQuery) };
}
