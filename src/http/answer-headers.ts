import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/**
 * Adds `headers` to the response's head whenever it is written. Not `setHeader`: a head written
 * as a raw array after `setHeader` goes through Node's per-name path, which keeps only the last of
 * repeated headers (`Warning`, `WWW-Authenticate`) of the relayed answer.
 */
export function addToAnswerHead(res: ServerResponse, headers: Readonly<Record<string, string>>): void {
  const writeHead = res.writeHead.bind(res) as (status: number, ...rest: unknown[]) => ServerResponse;
  const pairs = Object.entries(headers);
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const [first, second] = rest;
    if (typeof first === 'string') return writeHead(status, first, withPairs(second, pairs));
    return writeHead(status, withPairs(first, pairs));
  }) as ServerResponse['writeHead'];
}

function withPairs(head: unknown, pairs: readonly (readonly [string, string])[]): OutgoingHttpHeaders | string[] {
  if (Array.isArray(head)) return [...(head as string[]), ...pairs.flat()];
  return { ...(head as OutgoingHttpHeaders | undefined), ...Object.fromEntries(pairs) };
}
