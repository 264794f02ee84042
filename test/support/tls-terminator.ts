import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';

export interface TlsTerminator {
  readonly port: number;
  /** PEM file of the self-signed certificate, for `elasticsearch.ssl.ca`. */
  readonly caFile: string;
  close(): Promise<void>;
}

/**
 * HTTPS in front of a plain-HTTP server (the Elasticsearch stand-in): a self-signed certificate
 * for 127.0.0.1 made with openssl, each TLS connection piped to `targetPort`. Lets a test put a
 * TLS handshake between the proxy and the cluster, e.g. to hold one with a frozen TcpForwarder.
 */
export async function startTlsTerminator(targetPort: number): Promise<TlsTerminator> {
  const directory = mkdtempSync(join(tmpdir(), 'es-lock-proxy-tls-'));
  const keyFile = join(directory, 'key.pem');
  const certFile = join(directory, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  const sockets = new Set<Socket>();
  const server: Server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (tlsSocket) => {
    const plain = connect({ host: '127.0.0.1', port: targetPort });
    sockets.add(tlsSocket).add(plain);
    tlsSocket.pipe(plain).pipe(tlsSocket);
    const close = (): void => {
      tlsSocket.destroy();
      plain.destroy();
      sockets.delete(tlsSocket);
      sockets.delete(plain);
    };
    tlsSocket.on('error', close).on('close', close);
    plain.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('TLS terminator has no port');
  return {
    port: address.port,
    caFile: certFile,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
