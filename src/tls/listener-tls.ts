import { readFileSync } from 'node:fs';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { describeFileError } from '../config/file-errors.js';

/** Where the proxy port's certificate, key and (for mutual TLS) client CA are read from. */
export interface ListenerTlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** With it, clients must present a certificate this CA signed. */
  readonly caFile: string | null;
}

export type ListenerTlsKey = 'proxy.listen.tls.cert' | 'proxy.listen.tls.key' | 'proxy.listen.tls.ca';

/** What the files hold, checked: Node's TLS server takes `context` as is. */
export interface ListenerTlsMaterial {
  readonly context: SecureContextOptions;
  /** SHA-256 of the served certificate, as `openssl x509 -fingerprint -sha256` prints it. */
  readonly fingerprint256: string;
  /** The served certificate's last day of validity (ISO 8601), for the log line of a load. */
  readonly validTo: string;
}

/** A listener TLS file that cannot be served: which key names it and what was expected of it. */
export class ListenerTlsError extends Error {
  readonly key: ListenerTlsKey;
  readonly file: string;
  readonly expected: string;

  constructor(key: ListenerTlsKey, file: string, expected: string) {
    super(`${key}=${file}: expected ${expected}`);
    this.key = key;
    this.file = file;
    this.expected = expected;
  }
}

/**
 * Reads and checks the listener's PEM files the same way at startup and at every rotation, so a
 * file that would be refused at start is refused on reload too (and the served one stays).
 * Each mistake names the one file at fault: unreadable, not PEM, or a key of another certificate.
 */
export function readListenerTls(files: ListenerTlsFiles): ListenerTlsMaterial {
  const certPem = readPem('proxy.listen.tls.cert', files.certFile);
  const keyPem = readPem('proxy.listen.tls.key', files.keyFile);
  const caPem = files.caFile === null ? null : readPem('proxy.listen.tls.ca', files.caFile);
  const certificate = parseCertificate('proxy.listen.tls.cert', files.certFile, certPem, 'a PEM certificate');
  const privateKey = parsePrivateKey(files.keyFile, keyPem);
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ListenerTlsError('proxy.listen.tls.key', files.keyFile, `the private key of the certificate in proxy.listen.tls.cert (${files.certFile})`);
  }
  if (caPem !== null && files.caFile !== null) parseCertificate('proxy.listen.tls.ca', files.caFile, caPem, 'a PEM CA certificate');
  const context: SecureContextOptions = { cert: certPem, key: keyPem, ...(caPem !== null ? { ca: caPem } : {}) };
  try {
    createSecureContext(context);
  } catch (error) {
    throw new ListenerTlsError('proxy.listen.tls.cert', files.certFile, `a certificate chain OpenSSL accepts (${reasonOf(error)})`);
  }
  return { context, fingerprint256: certificate.fingerprint256, validTo: new Date(certificate.validTo).toISOString() };
}

function readPem(key: ListenerTlsKey, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new ListenerTlsError(key, file, `a readable PEM file (${describeFileError(error)})`);
  }
}

function parseCertificate(key: ListenerTlsKey, file: string, pem: Buffer, expected: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (error) {
    throw new ListenerTlsError(key, file, `${expected} (${reasonOf(error)})`);
  }
}

function parsePrivateKey(file: string, pem: Buffer): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (error) {
    throw new ListenerTlsError('proxy.listen.tls.key', file, `an unencrypted PEM private key (${reasonOf(error)})`);
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0] ?? error.message : String(error);
}
