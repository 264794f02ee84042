import { request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
}

export interface RawRequestOptions {
  readonly method?: string;
  /** Sent exactly as given (no normalisation). */
  readonly path?: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: Buffer | string;
  /** A fresh connection per request (default), so tests do not share sockets. */
  readonly agent?: false;
}

/** One HTTP exchange with a loopback server, body buffered. */
export function rawRequest(base: { host: string; port: number } | string, options: RawRequestOptions = {}): Promise<RawResponse> {
  const { hostname, port } = typeof base === 'string' ? new URL(base) : { hostname: base.host, port: String(base.port) };
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname, port: Number(port), method: options.method ?? 'GET', path: options.path ?? '/', headers: options.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export function jsonOf(response: RawResponse): unknown {
  return JSON.parse(response.body.toString('utf8'));
}
