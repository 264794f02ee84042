import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface IssuedCertificate {
  readonly certFile: string;
  readonly keyFile: string;
  /** SHA-256 fingerprint as Node's `X509Certificate.fingerprint256` and `getPeerCertificate()` print it. */
  readonly fingerprint256: string;
  readonly cert: Buffer;
  readonly key: Buffer;
}

export interface TestPki {
  readonly dir: string;
  /** The private CA's certificate (trust anchor for clients, and `proxy.listen.tls.ca`). */
  readonly caFile: string;
  readonly ca: Buffer;
  /** A server certificate for 127.0.0.1 and localhost, signed by the CA. */
  issueServer(name: string): IssuedCertificate;
  /** A client certificate signed by the CA (for mutual TLS). */
  issueClient(name: string): IssuedCertificate;
  /** A certificate signed by nobody the CA knows (self-signed). */
  issueSelfSigned(name: string): IssuedCertificate;
  /** Copies `from` over `to` (rename-free, as `cp` does when an operator replaces a file). */
  replace(from: string, to: string): void;
  cleanup(): void;
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'];

/**
 * A private CA made at test time with the openssl command line (as the TLS terminator of the
 * upstream tests does): real X.509 files, the same kind an operator gives the proxy, without a
 * certificate library in the dependencies. EC P-256 keys keep each issue to a few milliseconds.
 */
export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'es-lock-proxy-pki-'));
  const caFile = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca.key');
  openssl(['req', '-x509', ...EC_KEY, '-subj', '/CN=es-lock-proxy test CA', '-keyout', caKey, '-out', caFile]);
  const issue = (name: string, subject: string, extensions: readonly string[], signed: boolean): IssuedCertificate => {
    const certFile = join(dir, `${name}.pem`);
    const keyFile = join(dir, `${name}.key`);
    const signing = signed ? ['-CA', caFile, '-CAkey', caKey] : [];
    openssl(['req', '-x509', ...EC_KEY, '-subj', subject, ...extensions.flatMap((extension) => ['-addext', extension]), ...signing, '-keyout', keyFile, '-out', certFile]);
    const cert = readFileSync(certFile);
    return { certFile, keyFile, cert, key: readFileSync(keyFile), fingerprint256: new X509Certificate(cert).fingerprint256 };
  };
  const leaf = ['basicConstraints=critical,CA:FALSE'];
  return {
    dir,
    caFile,
    ca: readFileSync(caFile),
    issueServer: (name) => issue(name, `/CN=${name}`, [...leaf, 'subjectAltName=IP:127.0.0.1,DNS:localhost', 'extendedKeyUsage=serverAuth'], true),
    issueClient: (name) => issue(name, `/CN=${name}`, [...leaf, 'extendedKeyUsage=clientAuth'], true),
    issueSelfSigned: (name) => issue(name, `/CN=${name}`, [...leaf, 'subjectAltName=IP:127.0.0.1,DNS:localhost'], false),
    replace: (from, to) => copyFileSync(from, to),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function openssl(args: readonly string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}
