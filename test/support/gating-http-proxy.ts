import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';

/**
 * A plain HTTP proxy in front of a real cluster that holds matching requests (body received) until
 * released, then forwards them: a write "held inside the cluster", as the stand-in's gates do,
 * for a cluster that cannot be paused. Records the status the cluster gave each held request.
 */
export interface GatingHttpProxy {
  readonly url: string;
  /** Requests held so far. */
  readonly held: number;
  /** Statuses the cluster answered to the requests that were held, in release order. */
  readonly heldStatuses: readonly number[];
  release(): void;
  close(): Promise<void>;
}

export async function startGatingHttpProxy(target: string, holds: (req: IncomingMessage) => boolean): Promise<GatingHttpProxy> {
  const upstream = new URL(target);
  let open = false;
  let waiting: (() => void)[] = [];
  const statuses: number[] = [];
  let held = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const gated = holds(req);
      const forward = (): void => {
        const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } }, (answer) => {
          if (gated) statuses.push(answer.statusCode ?? 0);
          // The client may be gone (a 504 at the proxy): the cluster's answer is still read whole.
          if (res.destroyed) answer.resume();
          else {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          }
        });
        out.end(Buffer.concat(chunks));
      };
      if (!gated || open) return forward();
      held += 1;
      waiting.push(forward);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = address !== null && typeof address === 'object' ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    get held() {
      return held;
    },
    heldStatuses: statuses,
    release: () => {
      open = true;
      const resume = waiting;
      waiting = [];
      for (const forward of resume) forward();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
