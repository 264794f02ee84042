import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../support/free-port.js';
import { jsonOf, rawRequest, type RawResponse } from '../../support/http-request.js';
import { STAND_IN, startProxyHarness, type ProxyHarness } from '../../support/proxy-harness.js';

function expectElasticsearchError(response: RawResponse, status: number, type: string): void {
  expect(response.status).toBe(status);
  expect(response.headers['x-elastic-product']).toBe('Elasticsearch');
  expect(response.headers['content-type']).toBe('application/json');
  expect(jsonOf(response)).toEqual({
    error: { root_cause: [{ type, reason: expect.any(String) }], type, reason: expect.any(String) },
    status,
  });
}

describe('upstream failures and limits', () => {
  let harness: ProxyHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('skips a host that refuses connections and serves the request from the next one', async () => {
    const refusing = `http://127.0.0.1:${await freePort()}`;
    harness = await startProxyHarness({ hosts: [refusing, STAND_IN] });
    for (let i = 0; i < 4; i += 1) {
      const response = await rawRequest(harness.proxyUrl, { method: 'PUT', path: `/idx/_doc/${i}`, headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect(response.status).toBe(201);
    }
    expect(harness.standIn.requests).toHaveLength(4);
    expect(harness.standIn.documents('idx').size).toBe(4);
  });

  it('answers 502 in Elasticsearch shape when no host can be reached', async () => {
    const hosts = [`http://127.0.0.1:${await freePort()}`, `http://127.0.0.1:${await freePort()}`];
    harness = await startProxyHarness({ hosts });
    const response = await rawRequest(harness.proxyUrl, { path: '/idx/_search' });
    expectElasticsearchError(response, 502, 'upstream_unreachable_exception');
    expect(JSON.stringify(jsonOf(response))).toContain(hosts[0]);
  });

  it('does not replay a request whose connection was reset after it was sent; answers 502', async () => {
    harness = await startProxyHarness({ hosts: [STAND_IN, STAND_IN] });
    harness.standIn.injectFault({ kind: 'reset-before-headers' });
    const response = await rawRequest(harness.proxyUrl, { method: 'POST', path: '/idx/_doc', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expectElasticsearchError(response, 502, 'upstream_connection_reset_exception');
    expect(harness.standIn.requests).toHaveLength(1);
  });

  it('cuts the client response when the upstream resets mid-response', async () => {
    harness = await startProxyHarness();
    harness.standIn.injectFault({ kind: 'reset-mid-response' });
    await expect(rawRequest(harness.proxyUrl, { path: '/idx/_search' })).rejects.toThrow(/aborted|socket hang up|ECONNRESET/);
    expect((await rawRequest(harness.proxyUrl, { path: '/' })).status).toBe(200);
  });

  it('answers 504 when the upstream sends no response headers within the timeout', async () => {
    harness = await startProxyHarness({ settings: { proxy: { upstreamTimeoutMs: 200 } } });
    harness.standIn.injectFault({ kind: 'hang' });
    const response = await rawRequest(harness.proxyUrl, { path: '/idx/_search' });
    expectElasticsearchError(response, 504, 'upstream_timeout_exception');
  });

  it('answers 413 for a body over proxy.max.body.bytes, declared or chunked, forwarding nothing', async () => {
    harness = await startProxyHarness({ settings: { proxy: { maxBodyBytes: 1024 } } });
    const declared = await rawRequest(harness.proxyUrl, { method: 'POST', path: '/_bulk', body: Buffer.alloc(2048, 'a') });
    expectElasticsearchError(declared, 413, 'content_too_long_exception');
    expect(declared.headers.connection).toBe('close');

    const chunked = await rawRequest(harness.proxyUrl, { method: 'POST', path: '/_bulk', headers: { 'transfer-encoding': 'chunked' }, body: Buffer.alloc(4096, 'b') });
    expectElasticsearchError(chunked, 413, 'content_too_long_exception');

    const atLimit = await rawRequest(harness.proxyUrl, { method: 'POST', path: '/idx/_search', body: Buffer.alloc(1024, ' ') });
    expect(atLimit.status).toBe(200);
    expect(harness.standIn.requests.map((r) => r.url)).toEqual(['/idx/_search']);
  });

  it('answers 413 on the declared length alone, before the client has sent the body', async () => {
    harness = await startProxyHarness({ settings: { proxy: { maxBodyBytes: 1024 } } });
    const reply = await sendRaw(harness.proxyUrl, 'POST /_bulk HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n{"index":');
    expect(reply).toMatch(/^HTTP\/1\.1 413 /);
    expect(reply).toContain('"content_too_long_exception"');
  });

  it('answers 408 when the client stalls in the middle of its body', async () => {
    harness = await startProxyHarness({ deps: { bodyIdleTimeoutMs: 150 } });
    const reply = await sendRaw(harness.proxyUrl, 'PUT /idx/_doc/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a":');
    expect(reply).toMatch(/^HTTP\/1\.1 408 /);
    expect(reply).toContain('"request_timeout_exception"');
    expect(harness.standIn.requests).toHaveLength(0);
  });
});

/** Writes `text` on a raw socket and collects everything until the server closes. */
function sendRaw(baseUrl: string, text: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
    socket.write(text);
  });
}
