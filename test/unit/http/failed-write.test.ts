import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamForwarder } from '../../../src/elasticsearch/upstream-forwarder.js';
import { createProxyHandler } from '../../../src/http/proxy-handler.js';
import { writeInterceptorOf } from '../../../src/http/write-edge.js';
import type { WriteInterceptor } from '../../../src/http/write-interceptor.js';
import { testSettings } from '../../support/test-settings.js';

/** Log lines as written, parsed. */
function memoryLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

const NO_UPSTREAM = {} as UpstreamForwarder;

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

async function failedWriteThrough(interceptorOf: (logger: pino.Logger) => WriteInterceptor) {
  const { logger, lines } = memoryLogger();
  server = createServer(createProxyHandler({ forwarder: NO_UPSTREAM, logger, maxBodyBytes: 1 << 20, writeInterceptor: interceptorOf(logger) }));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}/idx/_doc/1`, { method: 'PUT', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
  return { status: res.status, requestId: res.headers.get('x-request-id'), body: (await res.json()) as unknown, lines };
}

describe('a write that fails with a fault of the proxy', () => {
  const boom = (): never => {
    throw new Error('secret detail');
  };

  it('gets one answer, one log line and its request id, whether the write path or the edge caught it', async () => {
    const inWritePath = await failedWriteThrough((logger) => writeInterceptorOf(async () => boom(), { settings: () => testSettings(), logger, forwarder: NO_UPSTREAM }));
    const atTheEdge = await failedWriteThrough(() => async () => boom());
    for (const failed of [inWritePath, atTheEdge]) {
      expect(failed.status).toBe(500);
      expect(failed.body).toEqual(inWritePath.body);
      expect(JSON.stringify(failed.body)).not.toContain('secret');
      const logged = failed.lines.filter((line) => line['msg'] === 'write path failed');
      expect(logged).toHaveLength(1);
      expect(failed.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(logged[0]?.['requestId']).toBe(failed.requestId);
    }
  });
});
