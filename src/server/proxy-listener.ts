import { createServer as createHttpServer, type RequestListener, type Server as HttpServer, type ServerOptions } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Logger } from 'pino';
import { ConfigError } from '../config/config-error.js';
import { ListenerTlsError, readListenerTls, type ListenerTlsFiles } from '../tls/listener-tls.js';

/** The proxy port's server: plain HTTP, or HTTPS only when the listener has a certificate. */
export type EdgeServer = HttpServer | HttpsServer;

export interface ProxyListener {
  readonly server: EdgeServer;
  readonly scheme: 'http' | 'https';
  /**
   * Re-reads the certificate files: connections opened afterwards get what they hold, open ones
   * keep the certificate they were made with. A file that cannot be served is logged and the served
   * certificate stays. Nothing to do for plain HTTP.
   */
  reloadCertificate(): void;
}

/**
 * Both kinds take the same HTTP options and handler, so keep-alive, timeouts, client-gone
 * detection and in-flight tracking behave the same over TLS.
 */
export function createProxyListener(
  tls: ListenerTlsFiles | null,
  options: ServerOptions,
  handler: RequestListener,
  logger: Logger,
): ProxyListener {
  if (tls === null) return { server: createHttpServer(options, handler), scheme: 'http', reloadCertificate: () => {} };
  const material = readAtStart(tls);
  const server = createHttpsServer(
    { ...options, ...material.context, ...(tls.caFile !== null ? { requestCert: true, rejectUnauthorized: true } : {}) },
    handler,
  );
  // A failed handshake (plain HTTP on this port, an untrusted or missing client certificate) ends
  // that connection only; at debug level, because any port scanner triggers it.
  server.on('tlsClientError', (error: Error) => logger.debug({ err: error.message }, 'TLS handshake failed'));
  let served = material.fingerprint256;
  logger.info({ fingerprint256: served, validTo: material.validTo, clientCertificates: tls.caFile !== null }, 'proxy port serves HTTPS');
  return {
    server,
    scheme: 'https',
    reloadCertificate: () => {
      let next;
      try {
        next = readListenerTls(tls);
      } catch (error) {
        if (!(error instanceof ListenerTlsError)) throw error;
        logger.error({ key: error.key, file: error.file, error: error.message, servedFingerprint256: served }, 'listener certificate not reloaded: the served certificate stays');
        return;
      }
      server.setSecureContext(next.context);
      if (next.fingerprint256 !== served) logger.info({ fingerprint256: next.fingerprint256, validTo: next.validTo, previous: served }, 'listener certificate reloaded');
      served = next.fingerprint256;
    },
  };
}

/** The files were checked while loading the settings; one replaced since is a configuration error all the same. */
function readAtStart(tls: ListenerTlsFiles): ReturnType<typeof readListenerTls> {
  try {
    return readListenerTls(tls);
  } catch (error) {
    if (error instanceof ListenerTlsError) throw new ConfigError(error.message, { cause: error, meta: { key: error.key } });
    throw error;
  }
}
