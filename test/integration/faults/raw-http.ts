import { connect } from 'node:net';

/** What came back on a raw socket: the parsed status line (0 when none) and the whole text. */
export interface RawReply {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
  /** The connection ended without any status line. */
  readonly empty: boolean;
  readonly ms: number;
}

export interface RawSendOptions {
  /** Bytes written at once; or a trickle of pieces `gapMs` apart. */
  readonly pieces: readonly Buffer[];
  readonly gapMs?: number;
  /** Gives up (resolves `empty`) after this long. */
  readonly timeoutMs?: number;
}

/**
 * Writes arbitrary bytes to a loopback server and reads until it closes: lets the hostile-input
 * tests send what no HTTP client would (raw bytes in the path, broken framing, trickles).
 */
export function sendRawBytes(port: number, options: RawSendOptions): Promise<RawReply> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseReply(Buffer.concat(chunks).toString('latin1'), performance.now() - started));
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 10_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', finish);
    // A server that answers early (413) may reset while we still write: keep what was read.
    socket.on('error', finish);
    void (async () => {
      for (const [i, piece] of options.pieces.entries()) {
        if (done || socket.destroyed) return;
        if (i > 0 && options.gapMs !== undefined) await new Promise((r) => setTimeout(r, options.gapMs));
        if (done || socket.destroyed) return;
        socket.write(piece);
      }
    })();
  });
}

function parseReply(text: string, ms: number): RawReply {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (match === null) return { status: 0, headers: new Map(), body: '', empty: true, ms };
  const headEnd = text.indexOf('\r\n\r\n');
  const head = headEnd < 0 ? text : text.slice(0, headEnd);
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status: Number(match[1]), headers, body: headEnd < 0 ? '' : text.slice(headEnd + 4), empty: false, ms };
}

/** A complete HTTP/1.1 request with `connection: close` and a content-length framing the body. */
export function httpRequestBytes(method: string, path: Buffer | string, headers: readonly (readonly [string, string])[], body: Buffer): Buffer {
  const head = Buffer.concat([
    Buffer.from(`${method} `, 'latin1'),
    typeof path === 'string' ? Buffer.from(path, 'latin1') : path,
    Buffer.from(' HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n', 'latin1'),
    ...headers.map(([name, value]) => Buffer.from(`${name}: ${value}\r\n`, 'latin1')),
    Buffer.from(`content-length: ${body.length}\r\n\r\n`, 'latin1'),
  ]);
  return Buffer.concat([head, body]);
}
