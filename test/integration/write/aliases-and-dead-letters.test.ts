import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { FileDeadLetterStore } from '../../../src/deadletter/file-dead-letter-store.js';
import { eventually, startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { BACKGROUND, ndjson, send } from './write-client.js';

function capture(): { sink: Writable; text: () => string } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { sink, text: () => chunks.join('') };
}

describe.each(LOCK_BACKENDS)('aliases and the dead-letter queue ($name locks)', (locks) => {
  let stack: WriteStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('writes through an alias and to the index behind it lock the same document', async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      proxies: 2,
      standIn: { writeLatencyMs: 3 },
      settings: { lock: { foregroundTimeoutMs: 20_000 } },
    });
    stack.standIn.defineAlias('catalog', 'catalog-v1');
    const writes = Array.from({ length: 40 }, (_, n) =>
      send(stack!.urls[n % 2]!, 'PUT', `/${n % 4 < 2 ? 'catalog' : 'catalog-v1'}/_doc/same`, { n }),
    );
    const statuses = (await Promise.all(writes)).map((r) => r.status);
    expect(statuses.every((status) => status === 200 || status === 201)).toBe(true);
    expect(stack.standIn.overlaps.count).toBe(0);

    const gate = stack.standIn.gateDocument('catalog-v1', 'same');
    const held = send(stack.urls[0]!, 'PUT', '/catalog/_doc/same', { n: 'held' });
    await gate.arrived(1);
    // Keyed on the alias (docs/requests-and-responses.md), for writes through it and to the index behind it.
    const inspection = await stack.proxies[1]!.locks.inspect({ index: 'catalog', id: 'same' });
    expect(inspection.holder).not.toBeNull();
    gate.release();
    await held;
  });

  it('a write whose alias cannot be resolved is answered 503 and not forwarded', async () => {
    stack = await startWriteStack({ ...locks.stackLocks() });
    stack.standIn.onRequest((request, res) => {
      if (!request.url.endsWith('/_alias')) return false;
      res.writeHead(500, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
      res.end('{"error":{"type":"exception","reason":"boom"},"status":500}');
      return true;
    });
    const answer = await send(stack.urls[0]!, 'PUT', '/catalog/_doc/1', { n: 1 });
    expect(answer.status).toBe(503);
    expect(answer.json).toMatchObject({ status: 503, error: { type: 'alias_resolution_exception' } });
    expect(stack.standIn.requests.filter((r) => r.url.startsWith('/catalog/') && !r.url.endsWith('/_alias'))).toHaveLength(0);
  });

  it('a bulk item naming an index Elasticsearch refuses to look up (400 from `_alias`) is keyed on that name, not answered 503', async () => {
    stack = await startWriteStack({ ...locks.stackLocks() });
    // The stand-in answers `GET /_all/_alias` with 400, as for any name it cannot route.
    const body = ndjson([{ create: { _index: '_all', _id: '1' } }, { n: 1 }, { index: { _index: 'catalog', _id: '2' } }, { n: 2 }]);
    const answer = await send(stack.urls[0]!, 'POST', '/_bulk', body, { 'content-type': 'application/x-ndjson' });
    expect(answer.status).toBe(200);
    expect(stack.standIn.document('catalog', '2')?.source).toEqual({ n: 2 });
    expect(await stack.proxies[0]!.locks.inspect({ index: '_all', id: '1' })).toMatchObject({ holder: null });
  });

  it('a background write retries, is dead-lettered, and `dlq replay` writes it through the proxy', async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      settings: { lock: { backgroundTimeoutMs: 150 }, elasticsearch: { requestRetryCount: 2 } },
    });
    const url = stack.urls[0]!;
    const gate = stack.standIn.gateDocument('products', 'kpi');
    const running = send(url, 'PUT', '/products/_doc/kpi', { writer: 'holder' });
    await gate.arrived(1);

    const answer = await send(url, 'PUT', '/products/_doc/kpi?refresh=true', { writer: 'late' }, { ...BACKGROUND, authorization: 'Basic c2VjcmV0OnNlY3JldA==' });
    expect(answer.status).toBe(429);
    expect(answer.json).toMatchObject({ error: { type: 'lock_wait_timeout_exception' } });
    const id = answer.headers.get('x-dead-letter-id');
    expect(id).toBeTruthy();

    const store = new FileDeadLetterStore(stack.deadLetterDir);
    const record = await store.get(id!);
    expect(record).toMatchObject({ method: 'PUT', path: '/products/_doc/kpi', query: 'refresh=true', priority: 'background', attempts: 3, hadCredentials: true });
    expect(record!.keys).toEqual([{ index: 'products', id: 'kpi' }]);
    expect(JSON.stringify(record)).not.toContain('c2VjcmV0');
    expect(record!.lastError.code).toBe('LOCK_TIMEOUT');

    gate.release();
    await running;
    expect(stack.standIn.document('products', 'kpi')?.source).toMatchObject({ writer: 'holder' });

    const out = capture();
    const err = capture();
    const exitCode = await runCli(['dlq', 'replay', id!, '--proxy', url, '--set', `proxy.deadletter.dir=${stack.deadLetterDir}`], {
      cwd: process.cwd(),
      env: {},
      stdout: out.sink,
      stderr: err.sink,
      signals: new EventEmitter(),
    });
    expect(err.text()).toContain('replaying re-applies old writes');
    expect(out.text()).toContain(`replayed ${id}: HTTP 200`);
    expect(exitCode).toBe(0);
    expect(stack.standIn.document('products', 'kpi')?.source).toMatchObject({ writer: 'late' });
    const replayed = stack.standIn.requests.filter((r) => r.body.toString().includes('"late"'));
    expect(replayed).toHaveLength(1);
    expect(replayed[0]!.headers['x-lock-type']).toBeUndefined();
    await eventually(async () => (await store.list()).records.length === 0);
    expect((await store.get(id!))?.replayedAt).not.toBeNull();
  });

  it('a background bulk retries its unlocked items in new rounds, then dead-letters just those items', async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      settings: { lock: { backgroundTimeoutMs: 100 }, elasticsearch: { requestRetryCount: 1 } },
    });
    const url = stack.urls[0]!;
    const gate = stack.standIn.gateDocument('products', 'busy');
    const running = send(url, 'PUT', '/products/_doc/busy', { writer: 'holder' });
    await gate.arrived(1);

    const body = ndjson([{ index: { _id: 'free' } }, { v: 1 }, { index: { _id: 'busy' } }, { v: 2 }]);
    const answer = await send(url, 'POST', '/products/_bulk', body, { ...BACKGROUND, 'content-type': 'application/x-ndjson' });
    expect(answer.status).toBe(200);
    const items = answer.json.items as Record<string, { status: number }>[];
    expect(items.map((item) => item.index!.status)).toEqual([201, 429]);
    const id = answer.headers.get('x-dead-letter-id');
    expect(id).toBeTruthy();
    const record = await new FileDeadLetterStore(stack.deadLetterDir).get(id!);
    expect(record).toMatchObject({ priority: 'background', attempts: 2, keys: [{ index: 'products', id: 'busy' }] });
    expect(record!.body.data).toBe(ndjson([{ index: { _id: 'busy' } }, { v: 2 }]));

    gate.release();
    await running;
  });

  it('when the dead-letter queue cannot be written, the write is still answered 429 (never 5xx) and the loss is logged', async () => {
    const blocker = join(await mkdtemp(join(tmpdir(), 'es-lock-proxy-dlq-blocked-')), 'not-a-directory');
    await writeFile(blocker, 'a file where the queue directory should be');
    const lines: string[] = [];
    stack = await startWriteStack({
      ...locks.stackLocks(),
      settings: { lock: { backgroundTimeoutMs: 100 }, elasticsearch: { requestRetryCount: 0 }, proxy: { deadLetterDir: join(blocker, 'dlq') } },
      logger: pino({ level: 'error' }, { write: (line: string) => lines.push(line) }),
    });
    const url = stack.urls[0]!;
    const gate = stack.standIn.gateDocument('products', 'busy');
    const running = send(url, 'PUT', '/products/_doc/busy', { writer: 'holder' });
    await gate.arrived(1);

    const single = await send(url, 'PUT', '/products/_doc/busy', { writer: 'late' }, BACKGROUND);
    expect(single.status).toBe(429);
    expect(single.headers.get('x-dead-letter-id')).toBeNull();
    const body = ndjson([{ index: { _id: 'free' } }, { v: 1 }, { index: { _id: 'busy' } }, { v: 2 }]);
    const bulk = await send(url, 'POST', '/products/_bulk', body, { ...BACKGROUND, 'content-type': 'application/x-ndjson' });
    expect(bulk.status).toBe(200);
    expect((bulk.json.items as Record<string, { status: number }>[]).map((item) => item.index!.status)).toEqual([201, 429]);
    expect(lines.filter((line) => line.includes('dead-letter queue write failed'))).toHaveLength(2);

    gate.release();
    await running;
  });
});
