/**
 * The reference bare proxy for `npm run bench`: what forwarding alone costs on this machine. A
 * `node:http` server that pipes each request to the stand-in and the answer back, nothing else
 * (no classification, no header filtering, no error shapes). Argument: JSON `{ upstream, client }`,
 * `client` = `node-http` (a keep-alive agent) or `undici` (an undici `Pool`): the same proxy with
 * both upstream clients, so the bench measures which client costs less CPU. With `zookeeper` (a
 * connect string), the `node-http` proxy takes a ZooKeeper lock around each document write the
 * least a lock can (reference-zookeeper-lock.ts), a `_bulk`'s documents in one transaction. Prints `{"port","statsPort"}`; `GET /stats` on
 * the stats port reports this process's CPU time.
 */
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool } from 'undici';
import { objectField } from './child-process.js';
import { connectReferenceLock, type ReferenceLock } from './reference-zookeeper-lock.js';

const config: unknown = JSON.parse(process.argv[2] ?? '{}');
const upstream = new URL(String(objectField(config, 'upstream')));
const client = String(objectField(config, 'client'));
const zookeeper = objectField(config, 'zookeeper');
const lock = typeof zookeeper === 'string' ? await connectReferenceLock(zookeeper) : null;

/** Forwards a request; `body`, when given, is sent instead of piping `req` (already read). */
type Handler = (req: IncomingMessage, res: ServerResponse, body?: Buffer) => void;

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Gives a lock just taken back when the response closes; false, and given back at once, when the
 * client left while it was being taken: its `close` has fired already, and the lock would stay
 * taken until the reference's session ended.
 */
function releasedOnClose(res: ServerResponse, release: () => void): boolean {
  if (res.closed) {
    release();
    return false;
  }
  res.once('close', release);
  return true;
}

/** A bulk's documents all locked in one transaction before `forward`, released in one after. */
function lockingBulk(lock: ReferenceLock, forward: Handler, req: IncomingMessage, res: ServerResponse): void {
  readBody(req)
    .then(async (body) => {
      const documents = lock.documentsOfBulk(body.toString('utf8'));
      await lock.acquireAll(documents);
      if (releasedOnClose(res, () => lock.releaseAll(documents))) forward(req, res, body);
    })
    .catch(() => res.destroy());
}

/** The lock taken before `forward`, released once the answer has gone back (or the client left). */
function locking(lock: ReferenceLock, forward: Handler): Handler {
  return (req, res) => {
    if (lock.isBulk(req.method, req.url)) return lockingBulk(lock, forward, req, res);
    const document = lock.documentOf(req.method, req.url);
    if (document === null) return forward(req, res);
    lock.acquire(document).then(
      () => {
        if (releasedOnClose(res, () => lock.release(document))) forward(req, res);
      },
      () => res.destroy(),
    );
  };
}

function viaNodeHttp(): Handler {
  const agent = new Agent({ keepAlive: true });
  return (req, res, body) => {
    const outgoing = request(
      { agent, hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    outgoing.on('error', () => res.destroy());
    if (body === undefined) req.pipe(outgoing);
    else outgoing.end(body);
  };
}

function viaUndici(): Handler {
  const pool = new Pool(upstream.origin, { connections: 256 });
  return (req, res) => {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && name !== 'connection' && name !== 'keep-alive' && name !== 'transfer-encoding') headers[name] = value;
    }
    const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    pool
      .request({ method: req.method as 'GET', path: req.url ?? '/', headers, body: hasBody ? req : null })
      .then((answer) => {
        res.writeHead(answer.statusCode, answer.headers as Record<string, string>);
        answer.body.pipe(res);
      })
      .catch(() => res.destroy());
  };
}

const forward = client === 'undici' ? viaUndici() : viaNodeHttp();
const server = createServer({ keepAliveTimeout: 75_000 }, lock === null ? forward : locking(lock, forward));
server.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const stats = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ cpu: process.cpuUsage() }));
});
stats.listen(0, '127.0.0.1');
await new Promise((resolve) => stats.once('listening', resolve));
const port = (s: typeof server): number => {
  const address = s.address();
  return address !== null && typeof address === 'object' ? address.port : -1;
};
process.on('SIGTERM', () => process.exit(0));
console.log(JSON.stringify({ port: port(server), statsPort: port(stats) }));
