import { createHash, randomBytes } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonOf, rawRequest } from '../../support/http-request.js';
import { startProxyHarness, type ProxyHarness } from '../../support/proxy-harness.js';

describe('pass-through fidelity', () => {
  let harness: ProxyHarness;
  beforeEach(async () => {
    harness = await startProxyHarness();
  });
  afterEach(async () => {
    await harness.close();
  });

  const lastUpstreamRequest = () => {
    const last = harness.standIn.requests.at(-1);
    if (last === undefined) throw new Error('nothing reached the stand-in');
    return last;
  };

  it.each(['GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'DELETE'])('forwards %s with its method', async (method) => {
    const response = await rawRequest(harness.proxyUrl, { method, path: '/some-index/_settings' });
    expect(lastUpstreamRequest().method).toBe(method);
    expect(response.status).toBe(400); // the stand-in's "no handler", passed through unchanged
  });

  it('keeps the raw path and query: %2F, percent-encoded and raw unicode, odd query syntax', async () => {
    const paths = [
      '/my-index/_doc/a%2Fb%2fc?routing=x%20y&q=%C3%A9+plus&flag&empty=&dup=1&dup=2',
      '/%E2%9C%93-index/_doc/%F0%9F%98%80',
      '/a//b/./../c?%zz',
    ];
    for (const path of paths) {
      await rawRequest(harness.proxyUrl, { path });
      expect(lastUpstreamRequest().url).toBe(path);
    }
  });

  it('answers a URL Node cannot parse (raw UTF-8 bytes) with 400 in Elasticsearch shape, forwarding nothing', async () => {
    const response = await rawRequest(harness.proxyUrl, { path: Buffer.from('/indice-é/_doc/ü', 'utf8').toString('latin1') });
    expect(response.status).toBe(400);
    expect(response.headers['x-elastic-product']).toBe('Elasticsearch');
    expect(jsonOf(response)).toMatchObject({ error: { type: 'illegal_argument_exception' }, status: 400 });
    expect(harness.standIn.requests).toHaveLength(0);
  });

  it('forwards end-to-end headers (authorization included) and drops hop-by-hop ones', async () => {
    await rawRequest(harness.proxyUrl, {
      method: 'POST',
      path: '/idx/_search',
      headers: {
        authorization: 'Basic ZWxhc3RpYzpzZWNyZXQ=',
        'x-opaque-id': 'trace-1',
        'x-custom': 'value',
        'content-type': 'application/vnd.elasticsearch+json; compatible-with=8',
        connection: 'keep-alive, X-Per-Hop',
        'x-per-hop': 'drop me',
        'keep-alive': 'timeout=5',
        'proxy-connection': 'keep-alive',
        te: 'trailers',
        trailer: 'x-checksum',
      },
      body: '{}',
    });
    const { headers } = lastUpstreamRequest();
    expect(headers).toMatchObject({
      authorization: 'Basic ZWxhc3RpYzpzZWNyZXQ=',
      'x-opaque-id': 'trace-1',
      'x-custom': 'value',
      'content-type': 'application/vnd.elasticsearch+json; compatible-with=8',
    });
    // The client chunked its body (it announced a trailer). Streamed, it goes chunked, or with its
    // length when all of it had already arrived; never with the client's trailer announcement.
    expect(['chunked', 'length 2']).toContain(headers['transfer-encoding'] ?? `length ${String(headers['content-length'])}`);
    expect(lastUpstreamRequest().body.toString()).toBe('{}');
    for (const name of ['x-per-hop', 'keep-alive', 'proxy-connection', 'te', 'trailer']) expect(headers[name]).toBeUndefined();
    expect(headers.connection).not.toMatch(/x-per-hop/i);
    expect(headers.host).toBe(new URL(harness.standIn.url).host);
  });

  it('replaces chunked request framing with a content-length of the same bytes', async () => {
    const body = Buffer.from('{"index":{}}\n{"a":1}\n');
    await new Promise<void>((resolve, reject) => {
      const req = request(`${harness.proxyUrl}/idx/_bulk`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.write(body.subarray(0, 5));
      req.end(body.subarray(5));
    });
    const upstream = lastUpstreamRequest();
    expect(upstream.headers['transfer-encoding']).toBeUndefined();
    expect(upstream.headers['content-length']).toBe(String(body.length));
    expect(upstream.body.equals(body)).toBe(true);
  });

  it('streams a chunked request body: the upstream gets the first bytes before the client sends the rest', async () => {
    // A plain node:http upstream: the stand-in reads bodies whole before it shows a request.
    let firstBytesUpstream = (): void => {};
    const firstBytesArrived = new Promise<void>((resolve) => (firstBytesUpstream = resolve));
    let upstreamFraming: string | undefined;
    const upstream = createServer((req, res) => {
      upstreamFraming = req.headers['transfer-encoding'];
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        firstBytesUpstream();
      });
      req.on('end', () => res.end(JSON.stringify({ received: Buffer.concat(chunks).toString() })));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const { port } = upstream.address() as AddressInfo;
    const streaming = await startProxyHarness({ hosts: [`http://127.0.0.1:${port}`] });
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const req = request(`${streaming.proxyUrl}/idx/_search`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.write('{"query":');
        void firstBytesArrived.then(() => req.end('{"match_all":{}}}'));
      });
      expect(upstreamFraming).toBe('chunked');
      expect(JSON.parse(answer)).toEqual({ received: '{"query":{"match_all":{}}}' });
    } finally {
      await streaming.close();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it('forwards binary bodies byte for byte, and a multi-megabyte body', async () => {
    const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 256));
    await rawRequest(harness.proxyUrl, { method: 'POST', path: '/bin', headers: { 'content-type': 'application/octet-stream' }, body: binary });
    expect(lastUpstreamRequest().body.equals(binary)).toBe(true);

    const large = randomBytes(8 * 1024 * 1024);
    await rawRequest(harness.proxyUrl, { method: 'PUT', path: '/large', body: large });
    expect(sha256(lastUpstreamRequest().body)).toBe(sha256(large));
  });

  it('passes statuses, bodies and headers back unchanged, repeated set-cookie included', async () => {
    harness.standIn.onRequest((req, res) => {
      const status = Number(/^\/status\/(\d+)$/.exec(req.url)?.[1] ?? 0);
      if (status === 0) return false;
      res.writeHead(status, 'Custom Reason', [
        'Content-Type', 'application/json',
        'X-elastic-product', 'Elasticsearch',
        'Set-Cookie', 'a=1; Path=/',
        'Set-Cookie', 'b=2; HttpOnly',
        'X-Upstream-Header', 'kept',
        'Warning', '299 Elasticsearch-8.15.0 "deprecated"',
      ]);
      res.end(JSON.stringify({ status }));
      return true;
    });
    for (const status of [200, 404, 409, 500]) {
      const response = await rawRequest(harness.proxyUrl, { path: `/status/${status}` });
      expect(response.status).toBe(status);
      expect(jsonOf(response)).toEqual({ status });
      expect(response.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; HttpOnly']);
      expect(response.headers['x-upstream-header']).toBe('kept');
      expect(response.headers.warning).toBe('299 Elasticsearch-8.15.0 "deprecated"');
      expect(response.headers['x-elastic-product']).toBe('Elasticsearch');
    }
  });

  it('answers HEAD with the upstream headers and no body', async () => {
    await rawRequest(harness.proxyUrl, { method: 'PUT', path: '/idx/_doc/1', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    const head = await rawRequest(harness.proxyUrl, { method: 'HEAD', path: '/idx/_doc/1' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
  });

  it('streams a multi-megabyte response: the client gets the first bytes before the upstream has finished', { timeout: 10_000 }, async () => {
    const half = randomBytes(2 * 1024 * 1024);
    let releaseSecondHalf = (): void => {};
    const secondHalfAllowed = new Promise<void>((resolve) => (releaseSecondHalf = resolve));
    let upstreamFinished = false;
    harness.standIn.onRequest(async (req, res) => {
      if (req.url !== '/stream') return false;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(half.length * 2) });
      res.write(half);
      await secondHalfAllowed;
      res.end(half, () => (upstreamFinished = true));
      return true;
    });

    const received: Buffer[] = [];
    let finishedWhenFirstBytesArrived: boolean | null = null;
    await new Promise<void>((resolve, reject) => {
      const req = request(`${harness.proxyUrl}/stream`, (res) => {
        res.on('data', (chunk: Buffer) => {
          if (finishedWhenFirstBytesArrived === null) {
            finishedWhenFirstBytesArrived = upstreamFinished;
            releaseSecondHalf(); // the upstream only finishes once the client has seen bytes
          }
          received.push(chunk);
        });
        res.on('end', resolve);
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(finishedWhenFirstBytesArrived).toBe(false);
    expect(sha256(Buffer.concat(received))).toBe(sha256(Buffer.concat([half, half])));
  });

  it('forwards admin-looking paths: the proxy port has no routes of its own', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const response = await rawRequest(harness.proxyUrl, { path });
      expect(lastUpstreamRequest().url).toBe(path);
      expect(response.status).toBe(404); // GET /healthz is "get index healthz" to Elasticsearch
      expect(jsonOf(response)).toMatchObject({ error: { type: 'index_not_found_exception' } });
    }
  });
});

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
