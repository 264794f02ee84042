import type { IncomingMessage } from 'node:http';
import { ProxyError } from '../errors/proxy-error.js';

/**
 * How long a client may stay silent in the middle of a body before it is answered 408. A
 * client that stalls would otherwise pin a socket (and, on the write path, nothing else: the
 * lock is only taken once the body is complete).
 */
export const DEFAULT_BODY_IDLE_TIMEOUT_MS = 30_000;

export interface ReadBodyOptions {
  readonly maxBytes: number;
  readonly idleTimeoutMs?: number;
}

/**
 * Reads the whole request body into memory, as Elasticsearch itself aggregates a request up to
 * `http.max_content_length`. Rejects with BODY_TOO_LARGE as soon as the declared or counted size
 * passes the limit (without reading the rest), REQUEST_TIMEOUT when the client stalls, and
 * BAD_REQUEST when the client goes away mid-body.
 */
export function readRequestBody(req: IncomingMessage, options: ReadBodyOptions): Promise<Buffer> {
  const declared = declaredLength(req);
  if (declared !== null && declared > options.maxBytes) {
    req.pause();
    return Promise.reject(tooLarge(declared, options.maxBytes));
  }
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return collect(req, options.maxBytes, options.idleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS);
}

function collect(req: IncomingMessage, maxBytes: number, idleTimeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let idleTimer = setTimeout(onIdle, idleTimeoutMs);

    function finish(outcome: () => void): void {
      clearTimeout(idleTimer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onClose);
      outcome();
    }
    function onData(chunk: Buffer): void {
      received += chunk.length;
      if (received > maxBytes) {
        req.pause();
        finish(() => reject(tooLarge(received, maxBytes)));
        return;
      }
      chunks.push(chunk);
      clearTimeout(idleTimer);
      idleTimer = setTimeout(onIdle, idleTimeoutMs);
    }
    function onEnd(): void {
      finish(() => resolve(Buffer.concat(chunks, received)));
    }
    function onIdle(): void {
      req.pause();
      finish(() =>
        reject(new ProxyError('REQUEST_TIMEOUT', `request body not received within ${idleTimeoutMs}ms of inactivity`)),
      );
    }
    function onAbort(): void {
      finish(() => reject(new ProxyError('BAD_REQUEST', 'client closed the connection before sending the whole body')));
    }
    function onClose(): void {
      if (!req.complete) onAbort();
    }

    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}

function declaredLength(req: IncomingMessage): number | null {
  const header = req.headers['content-length'];
  if (header === undefined || !/^\d+$/.test(header)) return null;
  return Number(header);
}

function tooLarge(size: number, maxBytes: number): ProxyError {
  return new ProxyError(
    'BODY_TOO_LARGE',
    `request body of ${size} bytes is larger than proxy.max.body.bytes [${maxBytes}]`,
    { meta: { size, maxBytes } },
  );
}
