import { request } from 'node:http';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ProxyError } from '../../../src/errors/proxy-error.js';
import type { ForwardOutcome } from '../../../src/elasticsearch/upstream-forwarder.js';
import type { InterceptedRequest } from '../../../src/http/write-interceptor.js';
import { startProxy } from '../../../src/server/start-proxy.js';
import { freePort } from '../../support/free-port.js';
import { jsonOf, rawRequest } from '../../support/http-request.js';
import { startProxyHarness, type ProxyHarness } from '../../support/proxy-harness.js';
import { testSettings } from '../../support/test-settings.js';

describe('proxy wiring', () => {
  let harness: ProxyHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it('hands writes to the write interceptor with their route and body, answers its failures, and passes the rest through', async () => {
    const seen: InterceptedRequest[] = [];
    harness = await startProxyHarness({
      deps: {
        writeInterceptor: async (request) => {
          seen.push(request);
          if (request.route.kind === 'single' && request.route.id === 'failing') throw new ProxyError('LOCK_UNAVAILABLE', 'zookeeper is down');
          request.res.writeHead(201, { 'content-type': 'application/json' }).end('{"by":"interceptor"}');
        },
      },
    });
    const answered = await rawRequest(harness.proxyUrl, { method: 'PUT', path: '/idx/_doc/answered', body: 'payload' });
    expect(answered.status).toBe(201);
    expect(seen[0]?.route).toEqual({ kind: 'single', op: 'index', index: 'idx', id: 'answered', typed: false });
    expect(seen[0]?.body.toString()).toBe('payload');
    expect(seen[0]?.bodyStreams).toBe(false);
    expect(seen[0]?.requestId).toMatch(/^[0-9a-f-]{36}$/);

    const failing = await rawRequest(harness.proxyUrl, { method: 'DELETE', path: '/idx/_doc/failing' });
    expect(failing.status).toBe(503);
    expect(jsonOf(failing)).toMatchObject({ error: { type: 'lock_service_unavailable_exception', reason: 'zookeeper is down' } });
    expect(failing.headers['x-request-id']).toBe(seen[1]?.requestId);

    // An auto-id write needs no lock: the write path gets it with its body still streaming.
    await rawRequest(harness.proxyUrl, { method: 'POST', path: '/idx/_doc', body: '{"a":1}' });
    expect(seen[2]?.route.kind).toBe('auto-id');
    expect(seen[2]?.bodyStreams).toBe(true);
    expect(seen[2]?.body.length).toBe(0);

    const passedThrough = await rawRequest(harness.proxyUrl, { method: 'POST', path: '/idx/_search', body: '{}' });
    expect(passedThrough.status).toBe(200);
    expect(seen).toHaveLength(3);
    expect(harness.standIn.requests.map((r) => r.url)).toEqual(['/idx/_search']);
  });

  it('pipe() keeps the upstream exchange going after the client left, and resolves only when it is over', async () => {
    let observed: { resolvedWhenClientLeft: boolean; outcome: ForwardOutcome } | null = null;
    let recorded: () => void = () => {};
    const done = new Promise<void>((resolve) => (recorded = resolve));
    harness = await startProxyHarness({
      deps: {
        createWriteInterceptor: ({ forwarder }) => async (request) => {
          let resolved = false;
          const piping = forwarder.pipe({ method: 'PUT', url: request.req.url ?? '/', rawHeaders: request.req.rawHeaders, body: request.body }, request.res);
          void piping.then(() => (resolved = true));
          await new Promise<void>((resolve) => request.clientGone.addEventListener('abort', resolve));
          const resolvedWhenClientLeft = resolved;
          gate.release();
          observed = { resolvedWhenClientLeft, outcome: await piping };
          recorded();
        },
      },
    });
    const gate = harness.standIn.gateDocument('idx', '1');
    const client = request(`${harness.proxyUrl}/idx/_doc/1`, { method: 'PUT', headers: { 'content-type': 'application/json' } });
    client.on('error', () => {});
    client.end('{"a":1}');
    await gate.arrived();
    client.destroy();
    await done;
    expect(observed).toMatchObject({ resolvedWhenClientLeft: false, outcome: { status: 201, reachedUpstream: true, error: null } });
    expect(harness.standIn.document('idx', '1')?.source).toEqual({ a: 1 });
    expect(harness.standIn.requests[0]?.finishedAt).not.toBeNull();
  });

  it('close() lets an in-flight request finish, then stops listening', async () => {
    harness = await startProxyHarness();
    const gate = harness.standIn.gateDocument('idx', '1');
    const inFlight = rawRequest(harness.proxyUrl, { method: 'PUT', path: '/idx/_doc/1', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    await gate.arrived();
    let closed = false;
    const closing = harness.proxy.close().then(() => (closed = true));
    await expect(rawRequest(harness.proxyUrl, { path: '/' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(closed).toBe(false);
    gate.release();
    expect((await inFlight).status).toBe(201);
    await closing;
    expect(closed).toBe(true);
  });

  it('reports the addresses it bound and fails cleanly when a port is taken', async () => {
    harness = await startProxyHarness();
    expect(harness.proxy.proxyAddress).toEqual({ host: '127.0.0.1', port: expect.any(Number) });
    expect(harness.proxy.adminAddress.port).not.toBe(harness.proxy.proxyAddress.port);
    const taken = testSettings({ proxy: { listenPort: await freePort(), adminPort: harness.proxy.adminAddress.port } });
    await expect(startProxy(taken, pino({ level: 'silent' }))).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
