import { afterAll, describe, expect, it } from 'vitest';
import { createTestPki } from '../../support/test-certificates.js';
import { configErrorOf, load, tempConfigDir } from './config-test-helpers.js';

const pki = createTestPki();
const server = pki.issueServer('server');
const other = pki.issueServer('other');
const files = tempConfigDir();
const notPem = files.write('not.pem', 'not a PEM file\n');
afterAll(() => {
  pki.cleanup();
  files.cleanup();
});

const cert = (file: string): string => `proxy.listen.tls.cert=${file}`;
const key = (file: string): string => `proxy.listen.tls.key=${file}`;
const ca = (file: string): string => `proxy.listen.tls.ca=${file}`;

describe('proxy.listen.tls.* loaded', () => {
  it('unset: the proxy port speaks plain HTTP', () => {
    expect(load().proxy.listenTls).toBeNull();
  });

  it('certificate and key: HTTPS without client certificates', () => {
    const settings = load({ flags: [cert(server.certFile), key(server.keyFile)] });
    expect(settings.proxy.listenTls).toEqual({ certFile: server.certFile, keyFile: server.keyFile, caFile: null });
  });

  it('with a CA: client certificates required (the CA path kept)', () => {
    const settings = load({ flags: [cert(server.certFile), key(server.keyFile), ca(pki.caFile)] });
    expect(settings.proxy.listenTls).toEqual({ certFile: server.certFile, keyFile: server.keyFile, caFile: pki.caFile });
  });

  it('from the environment too', () => {
    const env = { ES_LOCK_PROXY_PROXY_LISTEN_TLS_CERT: server.certFile, ES_LOCK_PROXY_PROXY_LISTEN_TLS_KEY: server.keyFile };
    expect(load({ env }).proxy.listenTls?.certFile).toBe(server.certFile);
  });
});

/** [--set flags, the exact one-line message]: every mistake names the key, the value and what was expected. */
const ERRORS: ReadonlyArray<readonly [string, readonly string[], string]> = [
  ['a certificate without key', [cert(server.certFile)], `${cert(server.certFile)}: expected proxy.listen.tls.key to be set too`],
  ['a key without certificate', [key(server.keyFile)], `${key(server.keyFile)}: expected proxy.listen.tls.cert to be set too`],
  [
    'a CA without certificate and key',
    [ca(pki.caFile)],
    `${ca(pki.caFile)}: expected proxy.listen.tls.cert and proxy.listen.tls.key to be set too`,
  ],
  [
    'a missing certificate file',
    [cert('/nonexistent/cert.pem'), key(server.keyFile)],
    `${cert('/nonexistent/cert.pem')}: expected a readable PEM file (ENOENT: no such file or directory)`,
  ],
  [
    'a missing key file',
    [cert(server.certFile), key('/nonexistent/key.pem')],
    `${key('/nonexistent/key.pem')}: expected a readable PEM file (ENOENT: no such file or directory)`,
  ],
  [
    'a directory as certificate',
    [cert(pki.dir), key(server.keyFile)],
    `${cert(pki.dir)}: expected a readable PEM file (EISDIR: illegal operation on a directory)`,
  ],
  [
    'the key of another certificate',
    [cert(server.certFile), key(other.keyFile)],
    `${key(other.keyFile)}: expected the private key of the certificate in proxy.listen.tls.cert (${server.certFile})`,
  ],
  [
    'a missing CA file',
    [cert(server.certFile), key(server.keyFile), ca('/nonexistent/ca.pem')],
    `${ca('/nonexistent/ca.pem')}: expected a readable PEM file (ENOENT: no such file or directory)`,
  ],
];

describe('proxy.listen.tls.* mistakes stop the start with one line', () => {
  it.each(ERRORS)('%s', (_name, flags, message) => {
    expect(configErrorOf({ flags })).toBe(message);
  });

  it('a file that is not a certificate (the key given as certificate, or text)', () => {
    expect(configErrorOf({ flags: [cert(server.keyFile), key(server.keyFile)] })).toMatch(
      new RegExp(`^${escape(cert(server.keyFile))}: expected a PEM certificate \\(.+\\)$`),
    );
    expect(configErrorOf({ flags: [cert(notPem), key(server.keyFile)] })).toMatch(new RegExp(`^${escape(cert(notPem))}: expected a PEM certificate \\(.+\\)$`));
  });

  it('a file that is not a private key (the certificate given as key)', () => {
    expect(configErrorOf({ flags: [cert(server.certFile), key(server.certFile)] })).toMatch(
      new RegExp(`^${escape(key(server.certFile))}: expected an unencrypted PEM private key \\(.+\\)$`),
    );
  });

  it('a CA file that holds no certificate', () => {
    expect(configErrorOf({ flags: [cert(server.certFile), key(server.keyFile), ca(notPem)] })).toMatch(
      new RegExp(`^${escape(ca(notPem))}: expected a PEM CA certificate \\(.+\\)$`),
    );
  });

  it('from a properties file: the key named as written there', () => {
    const configFile = files.write('tls.properties', `${cert(server.certFile)}\n${key(other.keyFile)}\n`);
    expect(configErrorOf({ configFile })).toBe(`${key(other.keyFile)}: expected the private key of the certificate in proxy.listen.tls.cert (${server.certFile})`);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
