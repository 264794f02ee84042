import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { decodeDeadLetterBody, type DeadLetterRecord } from './dead-letter-record.js';
import type { ReplayTls } from './replay-tls.js';

export interface ReplayTarget {
  /** The proxy's own listen address (http: or https:): a replay takes the document locks like any write. */
  readonly proxyUrl: URL;
  readonly lockHeader: string;
  /** Headers added to every replayed request (credentials are never stored with a record). */
  readonly extraHeaders: Readonly<Record<string, string>>;
  /** The connections to the proxy, from `replayAgent`. */
  readonly agent: HttpAgent;
}

export interface ReplayResult {
  readonly status: number;
  readonly body: string;
}

/**
 * The connections a replay run keeps to the proxy: HTTPS with the given trust and client
 * certificate when the URL says https:, plain HTTP otherwise. `destroy()` it when the run is done.
 */
export function replayAgent(proxyUrl: URL, tls: ReplayTls): HttpAgent {
  return proxyUrl.protocol === 'https:' ? new HttpsAgent({ ...tls, keepAlive: true, maxSockets: 1 }) : new HttpAgent({ keepAlive: true, maxSockets: 1 });
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
  const request = target.proxyUrl.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostOf(target.proxyUrl), port: target.proxyUrl.port, method: record.method, path, headers, agent: target.agent },
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

/** `URL.hostname` keeps an IPv6 address in brackets; a socket wants it bare. */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}
