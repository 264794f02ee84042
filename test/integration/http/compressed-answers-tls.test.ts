import { request } from 'node:https';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZOOKEEPER_LOCKS } from '../../support/lock-backends.js';
import { createTestPki, type TestPki } from '../../support/test-certificates.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';

interface HttpsAnswer {
  readonly status: number;
  readonly contentEncoding: string | undefined;
  readonly body: Buffer;
}

function httpsBulk(port: number, ca: Buffer, body: Buffer, headers: Record<string, string>): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/_bulk', ca, agent: false, headers: { 'content-type': 'application/x-ndjson', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentEncoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Over HTTPS the answers the proxy composes stay uncompressed whatever the client accepts, as
 * Elasticsearch's `http.compression` defaults to off with HTTPS (BREACH); a gzip request body is
 * read all the same.
 */
describe('compressed bulks on the TLS listener', () => {
  let pki: TestPki;
  let stack: WriteStack;
  beforeAll(async () => {
    pki = createTestPki();
    const served = pki.issueServer('compressed-answers');
    stack = await startWriteStack({
      ...ZOOKEEPER_LOCKS.stackLocks(),
      settings: { proxy: { listenTls: { certFile: served.certFile, keyFile: served.keyFile, caFile: null } } },
    });
  });
  afterAll(async () => {
    await stack?.close();
    pki?.cleanup();
  });

  it('reads a gzip bulk and composes its answer uncompressed for a client that accepts gzip', async () => {
    const port = stack.proxies[0]?.proxyAddress.port ?? 0;
    const gate = stack.standIn.gateDocument('tls', 'held');
    const holder = httpsBulk(port, pki.ca, Buffer.from('{"index":{"_index":"tls","_id":"held"}}\n{"v":"holder"}\n'), {});
    await gate.arrived(1);
    const lines = '{"index":{"_index":"tls","_id":"free"}}\n{"v":1}\n{"index":{"_index":"tls","_id":"held"}}\n{"v":2}\n';
    const bulk = httpsBulk(port, pki.ca, gzipSync(lines), { 'content-encoding': 'gzip', 'accept-encoding': 'gzip' });
    await stack.standIn.waitForRequest((request) => request.url === '/_bulk' && request.body.toString().includes('"free"'));
    gate.remove();
    expect((await holder).status).toBe(200);
    const answer = await bulk;
    expect(answer.status).toBe(200);
    expect(answer.contentEncoding).toBeUndefined();
    expect(JSON.parse(answer.body.toString())).toMatchObject({ errors: false, items: [{ index: { _id: 'free', status: 201 } }, { index: { _id: 'held', status: 200 } }] });
    expect(stack.standIn.document('tls', 'held')?.source).toEqual({ v: 2 });
    expect(stack.standIn.overlaps.count).toBe(0);
  });
});
