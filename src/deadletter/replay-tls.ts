import { readFileSync } from 'node:fs';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { describeFileError } from '../config/file-errors.js';

/** The replay's side of a TLS handshake with the proxy port, as the operator names the files. */
export interface ReplayTlsFiles {
  /** PEM CA certificate(s) trusted for the proxy's certificate; null: Node's trusted CAs. */
  readonly caFile: string | null;
  /** PEM client certificate (chain) for a proxy port that requires one (mutual TLS), with its key. */
  readonly certFile: string | null;
  readonly keyFile: string | null;
}

/** What the files hold, checked; `https.Agent` takes it as is. */
export interface ReplayTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
}

/** The option a replay TLS file was given with. */
export type ReplayTlsOption = '--ca' | '--cert' | '--key';

/** A replay TLS file that cannot be used: the option, the file and what was expected of it. */
export class ReplayTlsError extends Error {
  constructor(
    readonly option: ReplayTlsOption,
    readonly file: string,
    readonly expected: string,
  ) {
    super(`${option} ${file}: expected ${expected}`);
  }
}

/**
 * Reads and checks the files before anything is sent, each mistake naming the one file at fault
 * (as the proxy's own listener files are checked): unreadable, not PEM, a certificate without its
 * key or the key of another certificate.
 */
export function readReplayTls(files: ReplayTlsFiles): ReplayTls {
  if (files.certFile !== null && files.keyFile === null) throw new ReplayTlsError('--cert', files.certFile, '--key too (the private key of the client certificate)');
  if (files.keyFile !== null && files.certFile === null) throw new ReplayTlsError('--key', files.keyFile, '--cert too (the client certificate of this key)');
  const ca = files.caFile === null ? null : readCertificate('--ca', files.caFile, 'a PEM CA certificate');
  const client = files.certFile === null || files.keyFile === null ? null : readClientCertificate(files.certFile, files.keyFile);
  return { ...(ca !== null ? { ca } : {}), ...(client ?? {}) };
}

function readClientCertificate(certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  const cert = readCertificate('--cert', certFile, 'a PEM certificate');
  const key = readPem('--key', keyFile);
  if (!new X509Certificate(cert).checkPrivateKey(parsePrivateKey(keyFile, key))) {
    throw new ReplayTlsError('--key', keyFile, `the private key of the certificate in --cert (${certFile})`);
  }
  return { cert, key };
}

function readCertificate(option: ReplayTlsOption, file: string, expected: string): Buffer {
  const pem = readPem(option, file);
  try {
    new X509Certificate(pem);
  } catch (error) {
    throw new ReplayTlsError(option, file, `${expected} (${firstLine(error)})`);
  }
  return pem;
}

function parsePrivateKey(file: string, pem: Buffer): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (error) {
    throw new ReplayTlsError('--key', file, `an unencrypted PEM private key (${firstLine(error)})`);
  }
}

function readPem(option: ReplayTlsOption, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new ReplayTlsError(option, file, `a readable PEM file (${describeFileError(error)})`);
  }
}

function firstLine(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
}
