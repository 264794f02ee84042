import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Client } from '@elastic/elasticsearch';
import { pino, type Logger } from 'pino';
import { afterAll, afterEach, describe, expect, inject, it, vi } from 'vitest';
import { loadSettings } from '../../../src/config/load-settings.js';
import type { Settings } from '../../../src/config/settings.js';
import { settingsToProperties } from '../../../src/config/settings-to-properties.js';
import { startProxyRuntime, type ProxyRuntime } from '../../../src/server/proxy-runtime.js';
import { watchSettings } from '../../../src/server/settings-watcher.js';
import type { ListenerTlsFiles } from '../../../src/tls/listener-tls.js';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { createTestPki, type IssuedCertificate } from '../../support/test-certificates.js';
import { testSettings } from '../../support/test-settings.js';
import { httpsJson, keepAliveAgent, plainHttpGet, servedFingerprint } from '../../support/tls-client.js';
import { waitForLockService } from '../../support/write-stack.js';

const pki = createTestPki();
afterAll(() => pki.cleanup());

interface TlsProxy {
  readonly standIn: EsStandIn;
  readonly runtime: ProxyRuntime;
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Every log line of the proxy, parsed. */
  readonly logs: Array<Record<string, unknown>>;
  readonly logger: Logger;
  close(): Promise<void>;
}

const running: TlsProxy[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((proxy) => proxy.close()));
});

let issued = 0;
/** The served files at paths of their own, so a test can replace them as an operator would. */
function listenerFiles(options: { ca?: boolean } = {}): ListenerTlsFiles & { readonly first: IssuedCertificate } {
  issued += 1;
  const first = pki.issueServer(`listener-${issued}`);
  const certFile = join(pki.dir, `served-${issued}.pem`);
  const keyFile = join(pki.dir, `served-${issued}.key`);
  pki.replace(first.certFile, certFile);
  pki.replace(first.keyFile, keyFile);
  return { certFile, keyFile, caFile: options.ca === true ? pki.caFile : null, first };
}

/** The product (real ZooKeeper locks, the write path) with HTTPS on its port, in front of the stand-in. */
async function startTlsProxy(listenTls: ListenerTlsFiles, foregroundTimeoutMs = 2000): Promise<TlsProxy> {
  const standIn = await startEsStandIn();
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter((text) => text !== '')) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const settings = testSettings({
    zookeeper: { servers: inject('zookeeperConnect'), lockRoot: `/tls-${Date.now().toString(36)}-${issued}` }, lock: { foregroundTimeoutMs },
    elasticsearch: { hosts: [standIn.url] },
    proxy: { logLevel: 'info', listenTls: { certFile: listenTls.certFile, keyFile: listenTls.keyFile, caFile: listenTls.caFile } },
  });
  const runtime = await startProxyRuntime(settings, logger);
  await waitForLockService(runtime);
  let closed: Promise<void> | null = null;
  const proxy: TlsProxy = {
    standIn,
    runtime,
    url: `https://127.0.0.1:${runtime.proxyAddress.port}`,
    port: runtime.proxyAddress.port,
    logs,
    logger,
    close: () =>
      (closed ??= (async () => {
        await runtime.close();
        await standIn.stop();
      })()),
  };
  running.push(proxy);
  return proxy;
}

/** What the CLI's reload does: re-read every key (the TLS files checked again) from the running values. */
function rereadOf(runtime: ProxyRuntime): () => Settings {
  return () =>
    loadSettings({
      configFile: null,
      env: {},
      flags: Object.entries(settingsToProperties(runtime.settings())).map(([key, value]) => `${key}=${value}`),
    });
}

/** The CLI's SIGHUP path, on a signal source the test fires. */
function hangupWatcher(proxy: TlsProxy): { hangup(): void; stop(): void } {
  const signals = new EventEmitter();
  const stop = watchSettings({
    reread: rereadOf(proxy.runtime),
    target: proxy.runtime,
    logger: proxy.logger,
    configFile: null,
    signals: { on: (signal, listener) => signals.on(signal, listener), off: (signal, listener) => signals.off(signal, listener) },
  });
  return { hangup: () => signals.emit('SIGHUP'), stop };
}

describe('HTTPS on the proxy port', () => {
  it('the official client over https:// with the private CA: a single write and a bulk land', async () => {
    const proxy = await startTlsProxy(listenerFiles());
    expect(proxy.runtime.proxyScheme).toBe('https');
    const client = new Client({ node: proxy.url, tls: { ca: pki.ca }, maxRetries: 0 });
    try {
      await expect(client.index({ index: 'products', id: 'p/1', document: { name: 'lamp' } })).resolves.toMatchObject({ result: 'created' });
      const bulk = await client.helpers.bulk({
        datasource: [{ id: 'b1', n: 1 }, { id: 'b2', n: 2 }, { id: 'p/1', n: 3 }],
        onDocument: (doc) => ({ index: { _index: 'products', _id: doc.id } }),
      });
      expect(bulk).toMatchObject({ total: 3, successful: 3, failed: 0 });
    } finally {
      await client.close();
    }
    expect(proxy.standIn.document('products', 'b1')?.source).toEqual({ id: 'b1', n: 1 });
    expect(proxy.standIn.document('products', 'b2')?.source).toEqual({ id: 'b2', n: 2 });
    expect(proxy.standIn.history('products', 'p/1').map((write) => write.body)).toEqual([{ name: 'lamp' }, { id: 'p/1', n: 3 }]);
    expect(proxy.standIn.overlaps.count).toBe(0);
  });

  it('a client that does not trust the CA refuses the certificate; nothing reaches the cluster', async () => {
    const proxy = await startTlsProxy(listenerFiles());
    const stranger = pki.issueSelfSigned('stranger');
    await expect(httpsJson(proxy.url, 'PUT', '/products/_doc/1', { a: 1 }, { tls: { ca: stranger.cert } })).rejects.toThrow(/self.signed|unable to verify|certificate/i);
    expect(proxy.standIn.requests).toEqual([]);
  });

  it('keeps connections alive: consecutive writes share one TLS connection', async () => {
    const proxy = await startTlsProxy(listenerFiles());
    const agent = keepAliveAgent({ ca: pki.ca });
    try {
      const first = await httpsJson(proxy.url, 'PUT', '/products/_doc/k', { n: 1 }, { agent });
      const second = await httpsJson(proxy.url, 'PUT', '/products/_doc/k', { n: 2 }, { agent });
      expect([first.status, second.status]).toEqual([201, 200]);
      expect([first.reusedSocket, second.reusedSocket]).toEqual([false, true]);
    } finally {
      agent.destroy();
    }
    expect(proxy.standIn.document('products', 'k')?.source).toEqual({ n: 2 });
  });

  it('plain HTTP to the TLS port gets no Elasticsearch answer, and nothing is forwarded', async () => {
    const proxy = await startTlsProxy(listenerFiles());
    // The TLS server finds no handshake in the bytes and drops the connection: no HTTP answer at all.
    await expect(plainHttpGet(proxy.port, '/')).rejects.toThrow();
    expect(proxy.standIn.requests).toEqual([]);
  });

  it('a client that leaves during its lock wait is noticed over TLS: the wait ends, its write is never forwarded', async () => {
    const proxy = await startTlsProxy(listenerFiles(), 60_000);
    const gate = proxy.standIn.gateDocument('products', 'hot');
    const holder = httpsJson(proxy.url, 'PUT', '/products/_doc/hot', { by: 'holder' }, { tls: { ca: pki.ca } });
    await gate.arrived(1);
    const leaver = keepAliveAgent({ ca: pki.ca });
    const left = httpsJson(proxy.url, 'PUT', '/products/_doc/hot', { by: 'leaver' }, { agent: leaver }).catch((error: unknown) => error);
    await vi.waitFor(() => expect(proxy.runtime.locks.activity().waiting).toBe(1), { timeout: 10_000 });
    leaver.destroy();
    await vi.waitFor(() => expect(proxy.runtime.locks.activity().waiting).toBe(0), { timeout: 10_000 });
    await left;
    gate.release();
    await expect(holder).resolves.toMatchObject({ status: 201 });
    expect(proxy.standIn.history('products', 'hot').map((write) => write.body)).toEqual([{ by: 'holder' }]);
  });

  it('shutdown over TLS: an in-flight write finishes and is answered before the port closes', async () => {
    const proxy = await startTlsProxy(listenerFiles());
    const gate = proxy.standIn.gateDocument('products', 'late');
    const inFlight = httpsJson(proxy.url, 'PUT', '/products/_doc/late', { n: 1 }, { tls: { ca: pki.ca } });
    await gate.arrived(1);
    const closing = proxy.runtime.close();
    await vi.waitFor(() => expect(servedFingerprint(proxy.port, pki.ca)).rejects.toThrow(), { timeout: 10_000 });
    gate.release();
    await expect(inFlight).resolves.toMatchObject({ status: 201 });
    await closing;
    expect(proxy.standIn.document('products', 'late')?.source).toEqual({ n: 1 });
  });
});

describe('certificate rotation', () => {
  it('SIGHUP after the files were replaced: new connections get the new certificate, writes keep landing', async () => {
    const files = listenerFiles();
    const proxy = await startTlsProxy(files);
    const watcher = hangupWatcher(proxy);
    try {
      expect(await servedFingerprint(proxy.port, pki.ca)).toBe(files.first.fingerprint256);
      const renewed = pki.issueServer('renewed');
      pki.replace(renewed.certFile, files.certFile);
      pki.replace(renewed.keyFile, files.keyFile);
      // Replaced but not signalled: the served certificate is the one loaded.
      expect(await servedFingerprint(proxy.port, pki.ca)).toBe(files.first.fingerprint256);
      watcher.hangup();
      expect(await servedFingerprint(proxy.port, pki.ca)).toBe(renewed.fingerprint256);
      expect(proxy.logs).toContainEqual(expect.objectContaining({ msg: 'listener certificate reloaded', fingerprint256: renewed.fingerprint256 }));
      await expect(httpsJson(proxy.url, 'PUT', '/products/_doc/after', { n: 1 }, { tls: { ca: pki.ca } })).resolves.toMatchObject({ status: 201 });
      expect(proxy.standIn.document('products', 'after')?.source).toEqual({ n: 1 });
    } finally {
      watcher.stop();
    }
  });

  it('a key that does not match the new certificate: logged with the key named, the served certificate stays; fixed, the next SIGHUP serves it', async () => {
    const files = listenerFiles();
    const proxy = await startTlsProxy(files);
    const watcher = hangupWatcher(proxy);
    try {
      const renewed = pki.issueServer('renewed-late-key');
      pki.replace(renewed.certFile, files.certFile);
      watcher.hangup();
      expect(proxy.logs).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: 'configuration not reloaded: the running settings stay',
          error: `proxy.listen.tls.key=${files.keyFile}: expected the private key of the certificate in proxy.listen.tls.cert (${files.certFile})`,
        }),
      );
      expect(await servedFingerprint(proxy.port, pki.ca)).toBe(files.first.fingerprint256);
      await expect(httpsJson(proxy.url, 'PUT', '/products/_doc/meanwhile', { n: 1 }, { tls: { ca: pki.ca } })).resolves.toMatchObject({ status: 201 });
      pki.replace(renewed.keyFile, files.keyFile);
      watcher.hangup();
      expect(await servedFingerprint(proxy.port, pki.ca)).toBe(renewed.fingerprint256);
    } finally {
      watcher.stop();
    }
  });

  it('a file that went bad between the check and the reload (the file watch racing a writer): logged, the served certificate stays', async () => {
    const files = listenerFiles();
    const proxy = await startTlsProxy(files);
    pki.replace(pki.issueServer('half-written').keyFile, files.certFile);
    const diff = proxy.runtime.reload(proxy.runtime.settings());
    expect(diff).toEqual({ live: [], restart: [] });
    expect(proxy.logs).toContainEqual(
      expect.objectContaining({ level: 50, msg: 'listener certificate not reloaded: the served certificate stays', key: 'proxy.listen.tls.cert', file: files.certFile }),
    );
    expect(await servedFingerprint(proxy.port, pki.ca)).toBe(files.first.fingerprint256);
  });
});

describe('mutual TLS (proxy.listen.tls.ca set)', () => {
  it('refuses a client without a certificate, and one whose certificate the CA did not sign; nothing is forwarded', async () => {
    const proxy = await startTlsProxy(listenerFiles({ ca: true }));
    await expect(httpsJson(proxy.url, 'PUT', '/products/_doc/1', { a: 1 }, { tls: { ca: pki.ca } })).rejects.toThrow();
    const stranger = pki.issueSelfSigned('stranger-client');
    await expect(httpsJson(proxy.url, 'PUT', '/products/_doc/1', { a: 1 }, { tls: { ca: pki.ca, cert: stranger.cert, key: stranger.key } })).rejects.toThrow();
    expect(proxy.standIn.requests).toEqual([]);
  });

  it('accepts a client certificate the CA signed: the official client writes and bulks', async () => {
    const proxy = await startTlsProxy(listenerFiles({ ca: true }));
    const app = pki.issueClient('app');
    const client = new Client({ node: proxy.url, tls: { ca: pki.ca, cert: app.cert, key: app.key }, maxRetries: 0 });
    try {
      await client.index({ index: 'products', id: 'm1', document: { by: 'app' } });
      const bulk = await client.bulk({ operations: [{ index: { _index: 'products', _id: 'm2' } }, { by: 'bulk' }] });
      expect(bulk.errors).toBe(false);
    } finally {
      await client.close();
    }
    expect(proxy.standIn.document('products', 'm1')?.source).toEqual({ by: 'app' });
    expect(proxy.standIn.document('products', 'm2')?.source).toEqual({ by: 'bulk' });
  });
});
