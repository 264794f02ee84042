import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { freePort } from '../../support/free-port.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { startProxyRuntime } from '../../../src/server/proxy-runtime.js';
import { testSettings } from '../../support/test-settings.js';
import { pino } from 'pino';
import { send } from './write-client.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };

describe.each(LOCK_BACKENDS)('bad input is answered 4xx in Elasticsearch shape and nothing is forwarded ($name locks)', (locks) => {
  let stack: WriteStack;
  beforeAll(async () => {
    stack = await startWriteStack({ ...locks.stackLocks(), settings: { proxy: { maxBodyBytes: 64 * 1024 } } });
  });
  afterAll(() => stack?.close());

  const cases: { name: string; method: string; path: string; body?: string; headers?: Record<string, string>; status: number; type: string; mentions: string }[] = [
    { name: 'malformed action line', method: 'POST', path: '/_bulk', body: '{"index":{"_index":"p","_id":"1"}}\n{"a":1}\nnot json\n', headers: NDJSON, status: 400, type: 'illegal_argument_exception', mentions: '[3]' },
    { name: 'unknown action', method: 'POST', path: '/p/_bulk', body: '{"upsert":{"_id":"1"}}\n{}\n', headers: NDJSON, status: 400, type: 'illegal_argument_exception', mentions: 'upsert' },
    { name: 'bad metadata type', method: 'POST', path: '/p/_bulk', body: '{"index":{"_id":{"x":1}}}\n{}\n', headers: NDJSON, status: 400, type: 'illegal_argument_exception', mentions: '_id' },
    { name: 'missing trailing newline', method: 'POST', path: '/p/_bulk', body: '{"delete":{"_id":"1"}}', headers: NDJSON, status: 400, type: 'illegal_argument_exception', mentions: 'newline' },
    { name: 'bulk line without an index', method: 'POST', path: '/_bulk', body: '{"delete":{"_id":"1"}}\n', headers: NDJSON, status: 400, type: 'illegal_argument_exception', mentions: 'index' },
    { name: 'unknown lock header value', method: 'PUT', path: '/p/_doc/1', body: '{}', headers: { 'X-Lock-Type': 'urgent' }, status: 400, type: 'illegal_argument_exception', mentions: 'X-Lock-Type' },
    { name: 'body over proxy.max.body.bytes', method: 'PUT', path: '/p/_doc/1', body: `{"x":"${'y'.repeat(70 * 1024)}"}`, status: 413, type: 'content_too_long_exception', mentions: '' },
  ];

  for (const testCase of cases) {
    it(testCase.name, async () => {
      stack.standIn.resetLog();
      const answer = await send(stack.urls[0]!, testCase.method, testCase.path, testCase.body, testCase.headers);
      expect(answer.status).toBe(testCase.status);
      expect(answer.headers.get('x-elastic-product')).toBe('Elasticsearch');
      expect(answer.json).toMatchObject({ status: testCase.status, error: { type: testCase.type } });
      expect(JSON.stringify(answer.json)).toContain(testCase.mentions);
      expect(stack.standIn.requests.filter((r) => r.method !== 'GET' && r.method !== 'HEAD')).toHaveLength(0);
    });
  }

  it('by-query writes are refused with 403 when proxy.byquery.policy=reject, passed through otherwise', async () => {
    const passed = await send(stack.urls[0]!, 'POST', '/p/_delete_by_query', { query: { match_all: {} } });
    expect(passed.status).toBe(200);
    const rejecting = await startWriteStack({ ...locks.stackLocks(), settings: { proxy: { byQueryPolicy: 'reject' } } });
    try {
      const refused = await send(rejecting.urls[0]!, 'POST', '/p/_update_by_query', { query: { match_all: {} } });
      expect(refused.status).toBe(403);
      expect(refused.json).toMatchObject({ status: 403, error: { type: 'security_exception' } });
      expect(rejecting.standIn.requests.filter((r) => r.url.includes('_by_query'))).toHaveLength(0);
    } finally {
      await rejecting.close();
    }
  });
});

describe('when ZooKeeper cannot be reached', () => {
  it('writes answer 503 lock_service_unavailable_exception and reads still pass through', async () => {
    const nobody = await freePort();
    const reads = await startWriteStack({ zookeeper: inject('zookeeperConnect') });
    const settings = testSettings({
      zookeeper: { servers: `127.0.0.1:${nobody}`, connectionRetry: 2, connectionDelayMs: 100, sessionTimeoutMs: 4000 },
      elasticsearch: { hosts: [reads.standIn.url] },
    });
    const runtime = await startProxyRuntime(settings, pino({ level: 'silent' }));
    const url = `http://127.0.0.1:${runtime.proxyAddress.port}`;
    try {
      const started = Date.now();
      const write = await send(url, 'PUT', '/p/_doc/1', { n: 1 });
      expect(write.status).toBe(503);
      expect(write.json).toMatchObject({ status: 503, error: { type: 'lock_service_unavailable_exception' } });
      expect(Date.now() - started).toBeLessThan(10_000);
      const bulk = await send(url, 'POST', '/_bulk', '{"index":{"_index":"p","_id":"1"}}\n{}\n', NDJSON);
      expect(bulk.status).toBe(503);
      expect(reads.standIn.requests.filter((r) => r.method === 'PUT' || r.url.includes('_bulk'))).toHaveLength(0);
      const read = await send(url, 'GET', '/');
      expect(read.status).toBe(200);
      const ready = await fetch(`http://127.0.0.1:${runtime.adminAddress.port}/readyz`);
      expect(ready.status).toBe(503);
    } finally {
      await runtime.close();
      await reads.close();
    }
  });
});
