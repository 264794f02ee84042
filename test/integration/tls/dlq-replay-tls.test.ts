import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { createDeadLetterRecord, type DeadLetterRecord } from '../../../src/deadletter/dead-letter-record.js';
import { FileDeadLetterStore } from '../../../src/deadletter/file-dead-letter-store.js';
import { startProxyRuntime, type ProxyRuntime } from '../../../src/server/proxy-runtime.js';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { createTestPki, type IssuedCertificate } from '../../support/test-certificates.js';
import { testSettings } from '../../support/test-settings.js';
import { waitForLockService } from '../../support/write-stack.js';

/**
 * `dlq replay` sends a record through the proxy, which takes the document locks: through a proxy
 * port that speaks HTTPS, with mutual TLS or without, it must speak TLS too.
 */

const pki = createTestPki();
afterAll(() => pki.cleanup());

interface TlsProxy {
  readonly standIn: EsStandIn;
  readonly runtime: ProxyRuntime;
  readonly port: number;
  readonly server: IssuedCertificate;
  readonly deadLetterDir: string;
  readonly store: FileDeadLetterStore;
}

const running: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((close) => close()));
});

let started = 0;
/** The product (real ZooKeeper locks, the write path) with HTTPS on its port, in front of the stand-in. */
async function startTlsProxy(options: { mutual: boolean }): Promise<TlsProxy> {
  started += 1;
  const standIn = await startEsStandIn();
  const deadLetterDir = await mkdtemp(join(tmpdir(), 'dlq-replay-tls-'));
  const server = pki.issueServer(`dlq-proxy-${started}`);
  const settings = testSettings({
    zookeeper: { servers: inject('zookeeperConnect'), lockRoot: `/dlq-tls-${Date.now().toString(36)}-${started}` },
    elasticsearch: { hosts: [standIn.url] },
    proxy: { deadLetterDir, listenTls: { certFile: server.certFile, keyFile: server.keyFile, caFile: options.mutual ? pki.caFile : null } },
  });
  const runtime = await startProxyRuntime(settings, pino({ level: 'silent' }));
  running.push(async () => {
    await runtime.close();
    await standIn.stop();
    await rm(deadLetterDir, { recursive: true, force: true });
  });
  await waitForLockService(runtime);
  return { standIn, runtime, port: runtime.proxyAddress.port, server, deadLetterDir, store: new FileDeadLetterStore(deadLetterDir) };
}

async function deadLettered(proxy: TlsProxy, id: string, source: Record<string, unknown>): Promise<DeadLetterRecord> {
  const record = createDeadLetterRecord({
    method: 'PUT',
    url: `/products/_doc/${id}`,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(source)),
    priority: 'background',
    keys: [{ index: 'products', id }],
    attemptTimes: [Date.now()],
    lastError: { code: 'LOCK_TIMEOUT', message: 'lock wait timed out' },
  });
  await proxy.store.append(record);
  return record;
}

async function dlq(proxy: TlsProxy, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['dlq', ...args, '--set', `proxy.deadletter.dir=${proxy.deadLetterDir}`], {
    cwd: process.cwd(),
    env: {},
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    signals: new EventEmitter(),
  });
  return { code, stdout, stderr };
}

const errorLines = (stderr: string): string[] => stderr.split('\n').filter((line) => line.startsWith('es-lock-proxy:'));

describe('dlq replay through a proxy port that speaks HTTPS', () => {
  it('--proxy https://… with --ca: the record is written through the proxy and marked replayed', async () => {
    const proxy = await startTlsProxy({ mutual: false });
    const record = await deadLettered(proxy, 'tls-1', { writer: 'replayed' });

    const run = await dlq(proxy, 'replay', record.id, '--proxy', `https://127.0.0.1:${proxy.port}`, '--ca', pki.caFile);
    expect(run.stdout).toBe(`replayed ${record.id}: HTTP 201\n`);
    expect(run.code).toBe(0);
    expect(proxy.standIn.document('products', 'tls-1')?.source).toEqual({ writer: 'replayed' });
    expect((await proxy.store.get(record.id))?.replayStatus).toBe('201');
  });

  it('without --proxy, the configured listen address with TLS on means https://', async () => {
    const proxy = await startTlsProxy({ mutual: false });
    const record = await deadLettered(proxy, 'tls-default', { writer: 'by-default' });

    const run = await dlq(
      proxy,
      'replay',
      record.id,
      '--ca',
      pki.caFile,
      '--set',
      'proxy.listen.host=127.0.0.1',
      '--set',
      `proxy.listen.port=${proxy.port}`,
      '--set',
      `proxy.listen.tls.cert=${proxy.server.certFile}`,
      '--set',
      `proxy.listen.tls.key=${proxy.server.keyFile}`,
    );
    expect(run.stdout).toBe(`replayed ${record.id}: HTTP 201\n`);
    expect(run.code).toBe(0);
    expect(proxy.standIn.document('products', 'tls-default')?.source).toEqual({ writer: 'by-default' });
  });

  it('mutual TLS: --cert and --key present a client certificate; without one the handshake fails, in one line, and nothing is marked', async () => {
    const proxy = await startTlsProxy({ mutual: true });
    const record = await deadLettered(proxy, 'mtls', { writer: 'with-client-cert' });
    const url = `https://127.0.0.1:${proxy.port}`;

    const refused = await dlq(proxy, 'replay', record.id, '--proxy', url, '--ca', pki.caFile);
    expect(refused.code).toBe(1);
    expect(errorLines(refused.stderr)).toEqual([
      `es-lock-proxy: dlq replay: could not replay ${record.id} through ${url}: tlsv13 alert certificate required (the proxy port may require a client certificate its CA signed: --cert and --key)`,
    ]);
    expect(proxy.standIn.requests).toEqual([]);
    expect((await proxy.store.get(record.id))?.replayedAt).toBeNull();

    const client = pki.issueClient('dlq-operator');
    const run = await dlq(proxy, 'replay', record.id, '--proxy', url, '--ca', pki.caFile, '--cert', client.certFile, '--key', client.keyFile);
    expect(run.stdout).toBe(`replayed ${record.id}: HTTP 201\n`);
    expect(run.code).toBe(0);
    expect(proxy.standIn.document('products', 'mtls')?.source).toEqual({ writer: 'with-client-cert' });
  });

  it('a proxy certificate nobody configured trust in is refused: one line naming the reason, exit 1, nothing sent', async () => {
    const proxy = await startTlsProxy({ mutual: false });
    const record = await deadLettered(proxy, 'untrusted', { writer: 'never' });
    const url = `https://127.0.0.1:${proxy.port}`;

    const run = await dlq(proxy, 'replay', record.id, '--proxy', url);
    expect(run.code).toBe(1);
    expect(errorLines(run.stderr)).toEqual([`es-lock-proxy: dlq replay: could not replay ${record.id} through ${url}: unable to verify the first certificate (pass the CA that signed the proxy's certificate with --ca)`]);
    expect(proxy.standIn.requests).toEqual([]);
    expect((await proxy.store.get(record.id))?.replayedAt).toBeNull();
  });

  it('plain http:// to the HTTPS port says so instead of "socket hang up"', async () => {
    const proxy = await startTlsProxy({ mutual: false });
    const record = await deadLettered(proxy, 'plain', { writer: 'never' });
    const url = `http://127.0.0.1:${proxy.port}`;

    const run = await dlq(proxy, 'replay', record.id, '--proxy', url);
    expect(run.code).toBe(1);
    expect(errorLines(run.stderr)).toEqual([
      `es-lock-proxy: dlq replay: could not replay ${record.id} through ${url}: socket hang up (if the proxy port speaks HTTPS, use an https:// URL)`,
    ]);

    const later = await deadLettered(proxy, 'plain-later', { writer: 'never' });
    const all = await dlq(proxy, 'replay', '--all', '--proxy', url);
    expect(all.code).toBe(1);
    expect(all.stderr).toContain(`could not replay ${record.id} through ${url}: socket hang up`);
    expect(all.stderr).toContain('dlq: 1 later record(s) not tried\n');
    expect(all.stderr).not.toContain(later.id);
    expect(proxy.standIn.requests).toEqual([]);
    expect((await proxy.store.list()).records.map((each) => each.id)).toEqual([record.id, later.id]);
  });
});

describe('dlq replay TLS options, checked before anything is sent', () => {
  const context = {
    cwd: process.cwd(),
    env: {},
    signals: new EventEmitter(),
  };
  async function usage(...args: string[]): Promise<{ code: number; stderr: string }> {
    let stderr = '';
    const code = await runCli(['dlq', 'replay', 'dlq-any', ...args], { ...context, stdout: { write: () => true }, stderr: { write: (text: string) => (stderr += text) } });
    return { code, stderr };
  }

  it.each([
    [['--proxy', 'https://127.0.0.1:1', '--cert', 'c.pem'], 'es-lock-proxy: dlq replay: --cert c.pem: expected --key too (the private key of the client certificate)'],
    [['--proxy', 'https://127.0.0.1:1', '--key', 'k.pem'], 'es-lock-proxy: dlq replay: --key k.pem: expected --cert too (the client certificate of this key)'],
    [['--proxy', 'http://127.0.0.1:1', '--ca', 'ca.pem'], 'es-lock-proxy: dlq replay: --ca ca.pem: expected an https:// proxy URL (the proxy is http://127.0.0.1:1)'],
    [['--proxy', 'https://127.0.0.1:1', '--ca', '/nope/ca.pem'], 'es-lock-proxy: dlq replay: --ca /nope/ca.pem: expected a readable PEM file (ENOENT: no such file or directory)'],
    [['--proxy', 'ftp://127.0.0.1:1'], 'es-lock-proxy: dlq replay: --proxy ftp://127.0.0.1:1: expected an http:// or https:// URL like https://127.0.0.1:9201'],
  ])('%j: exit 2, one line', async (args, line) => {
    const run = await usage(...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`${line} (see es-lock-proxy dlq --help)\n`);
  });

  it.each([
    [[], 'http://127.0.0.1:9201'],
    [['--set', 'proxy.listen.host=0.0.0.0'], 'http://127.0.0.1:9201'],
    [['--set', 'proxy.listen.host=::'], 'http://[::1]:9201'],
    [['--set', 'proxy.listen.host=fd00::7'], 'http://[fd00::7]:9201'],
    [['--set', 'proxy.listen.host=proxy.internal', 'tls'], 'https://proxy.internal:9201'],
  ])('without --proxy, %j replays via %s', async (flags, origin) => {
    const dir = await mkdtemp(join(tmpdir(), 'dlq-default-url-'));
    try {
      const record = createDeadLetterRecord({
        method: 'DELETE',
        url: '/products/_doc/gone',
        headers: {},
        body: Buffer.alloc(0),
        priority: 'background',
        keys: [{ index: 'products', id: 'gone' }],
        attemptTimes: [Date.now()],
        lastError: { code: 'LOCK_TIMEOUT', message: 'lock wait timed out' },
      });
      await new FileDeadLetterStore(dir).append(record);
      const server = pki.issueServer('default-url');
      const tls = flags.includes('tls') ? ['--set', `proxy.listen.tls.cert=${server.certFile}`, '--set', `proxy.listen.tls.key=${server.keyFile}`] : [];
      let stdout = '';
      const args = ['dlq', 'replay', '--all', '--dry-run', '--set', `proxy.deadletter.dir=${dir}`, '--set', 'proxy.listen.port=9201', ...flags.filter((flag) => flag !== 'tls'), ...tls];
      const code = await runCli(args, { ...context, stdout: { write: (text: string) => (stdout += text) }, stderr: { write: () => true } });
      expect(code).toBe(0);
      expect(stdout).toBe(`would replay ${record.id} ${record.createdAt} background DELETE /products/_doc/gone keys=products/gone attempts=1 error=LOCK_TIMEOUT via ${origin}\n`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a key of another certificate is named', async () => {
    const one = pki.issueClient('one');
    const other = pki.issueClient('other');
    const run = await usage('--proxy', 'https://127.0.0.1:1', '--cert', one.certFile, '--key', other.keyFile);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`es-lock-proxy: dlq replay: --key ${other.keyFile}: expected the private key of the certificate in --cert (${one.certFile}) (see es-lock-proxy dlq --help)\n`);
  });
});
