import { request } from 'node:http';
import { decodeDeadLetterBody, type DeadLetterRecord } from './dead-letter-record.js';

export interface ReplayTarget {
  /** The proxy's own listen address: a replay takes the document locks like any write. */
  readonly proxyUrl: URL;
  readonly lockHeader: string;
  /** Headers added to every replayed request (credentials are never stored with a record). */
  readonly extraHeaders: Readonly<Record<string, string>>;
}

export interface ReplayResult {
  readonly status: number;
  readonly body: string;
}

/** Sends a dead-lettered request again, through the proxy, with its original priority. */
export function replayRecord(record: DeadLetterRecord, target: ReplayTarget): Promise<ReplayResult> {
  const body = decodeDeadLetterBody(record.body);
  const path = record.query === '' ? record.path : `${record.path}?${record.query}`;
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(record.headers)) headers[name] = typeof value === 'string' ? value : [...value];
  Object.assign(headers, target.extraHeaders, {
    [target.lockHeader]: record.priority,
    'content-length': String(body.length),
  });
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.proxyUrl.hostname, port: target.proxyUrl.port, method: record.method, path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
