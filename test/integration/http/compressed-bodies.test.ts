import { brotliCompressSync, deflateRawSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonOf, rawRequest, type RawResponse } from '../../support/http-request.js';
import { pino } from 'pino';
import { INFLATE_CHUNK_BYTES } from '../../../src/http/body/inflate-body.js';
import { FileDeadLetterStore } from '../../../src/deadletter/file-dead-letter-store.js';
import { ZOOKEEPER_LOCKS } from '../../support/lock-backends.js';
import type { EsStandIn, LoggedRequest } from '../../support/es-stand-in.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';

const MAX_BODY_BYTES = 1 << 20;
const NDJSON = 'application/x-ndjson';

function ndjson(lines: readonly unknown[]): Buffer {
  return Buffer.from(lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
}

/** One proxy of a write stack (real ZooKeeper locks) in front of the stand-in. */
interface Proxy {
  readonly proxyUrl: string;
  readonly adminUrl: string;
  readonly standIn: EsStandIn;
}

function proxyOf(stack: WriteStack): Proxy {
  return { proxyUrl: stack.urls[0] ?? '', adminUrl: stack.adminUrls[0] ?? '', standIn: stack.standIn };
}

function post(harness: Proxy, path: string, body: Buffer, headers: Record<string, string>): Promise<RawResponse> {
  return rawRequest(harness.proxyUrl, { method: 'POST', path, body, headers: { 'content-type': NDJSON, ...headers } });
}

/** Requests holding or queued on a document's lock, as the admin API reports them. */
async function lockEntriesOf(harness: Proxy, index: string, id: string): Promise<number> {
  const inspection = (await (await fetch(`${harness.adminUrl}/locks/${index}/${id}`)).json()) as { holder?: unknown; queue?: unknown[] };
  return (inspection.holder === null || inspection.holder === undefined ? 0 : 1) + (inspection.queue?.length ?? 0);
}

/** What reached the cluster besides the proxy's own alias look-ups. */
function forwarded(harness: Proxy): readonly LoggedRequest[] {
  return harness.standIn.requests.filter((request) => !request.url.endsWith('/_alias'));
}

describe('compressed request bodies through the proxy', () => {
  let stacks: WriteStack[] = [];
  let harness: Proxy;
  let fenced: Proxy;
  /** The first proxy's log lines, to read how far a refused body was inflated. */
  const logLines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(JSON.parse(line) as Record<string, unknown>) });
    stacks = [
      await startWriteStack({ ...ZOOKEEPER_LOCKS.stackLocks(), settings: { proxy: { maxBodyBytes: MAX_BODY_BYTES } }, logger }),
      await startWriteStack({ ...ZOOKEEPER_LOCKS.stackLocks(), settings: { proxy: { maxBodyBytes: MAX_BODY_BYTES, fencing: 'on' } } }),
    ];
    harness = proxyOf(stacks[0]!);
    fenced = proxyOf(stacks[1]!);
  });
  afterAll(async () => {
    await Promise.all(stacks.map((stack) => stack.close()));
  });

  it('locks a gzip _bulk and forwards it whole as it came: the same compressed bytes, the same header', async () => {
    harness.standIn.resetLog();
    const body = gzipSync(ndjson([{ index: { _index: 'gz', _id: '1' } }, { v: 'one' }, { create: { _index: 'gz', _id: '2' } }, { v: 'two' }]), { level: 1 });
    const answer = await post(harness, '/_bulk', body, { 'Content-Encoding': 'GZIP' });
    expect(answer.status).toBe(200);
    expect(jsonOf(answer)).toMatchObject({ errors: false, items: [{ index: { _id: '1', status: 201 } }, { create: { _id: '2', status: 201 } }] });
    const [whole, ...others] = forwarded(harness);
    expect(others).toEqual([]);
    expect(whole?.headers['content-encoding']).toBe('GZIP');
    expect(whole?.wireBody).toEqual(body);
    expect(harness.standIn.document('gz', '1')?.source).toEqual({ v: 'one' });
    expect(harness.standIn.document('gz', '2')?.source).toEqual({ v: 'two' });
  });

  it('sends the sub-bulks of a compressed bulk uncompressed, without Content-Encoding, when one document is held', async () => {
    harness.standIn.resetLog();
    await rawRequest(harness.proxyUrl, { method: 'PUT', path: '/split/_doc/held', body: '{"v":"seed"}', headers: { 'content-type': 'application/json' } });
    const gate = harness.standIn.gateDocument('split', 'held');
    const holder = rawRequest(harness.proxyUrl, { method: 'PUT', path: '/split/_doc/held', body: '{"v":"holder"}', headers: { 'content-type': 'application/json' } });
    await gate.arrived(1);
    const body = deflateSync(ndjson([{ index: { _index: 'split', _id: 'free' } }, { v: 'free' }, { index: { _index: 'split', _id: 'held' } }, { v: 'bulk' }]));
    const bulk = post(harness, '/_bulk', body, { 'Content-Encoding': 'deflate', 'Accept-Encoding': 'gzip' });
    // The free document's sub-bulk reached the cluster while the held one waits for its lock.
    const first = await harness.standIn.waitForRequest((request) => request.url === '/_bulk');
    expect(first.body.toString()).toContain('"free"');
    expect(await lockEntriesOf(harness, 'split', 'held')).toBe(2);
    gate.remove();
    expect((await holder).status).toBe(200);
    // The answer the proxy composed from the sub-bulks' is compressed, as Elasticsearch's would be.
    const answer = await bulk;
    expect(answer.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(answer.body).toString())).toMatchObject({
      errors: false,
      items: [{ index: { _id: 'free', status: 201 } }, { index: { _id: 'held', status: 200 } }],
    });
    const subBulks = harness.standIn.requests.filter((request) => request.url === '/_bulk');
    expect(subBulks).toHaveLength(2);
    for (const subBulk of subBulks) {
      expect(subBulk.headers['content-encoding']).toBeUndefined();
      expect(subBulk.wireBody).toEqual(subBulk.body);
    }
    expect(harness.standIn.document('split', 'held')?.source).toEqual({ v: 'bulk' });
    expect(harness.standIn.overlaps.count).toBe(0);
  });

  it('with fencing on, reads a deflate bulk (zlib-wrapped and raw) and sends its fenced rewrite uncompressed', async () => {
    await rawRequest(fenced.proxyUrl, { method: 'PUT', path: '/fz/_doc/1', body: '{"v":0}', headers: { 'content-type': 'application/json' } });
    fenced.standIn.resetLog();
    for (const [n, deflate] of [deflateSync, deflateRawSync].entries()) {
      const body = deflate(ndjson([{ index: { _index: 'fz', _id: '1' } }, { v: n + 1 }, { update: { _index: 'fz', _id: '2' } }, { doc: { w: n }, doc_as_upsert: true }]));
      const answer = await post(fenced, '/_bulk', body, { 'Content-Encoding': 'Deflate' });
      expect(jsonOf(answer)).toMatchObject({ errors: false });
    }
    const bulks = fenced.standIn.requests.filter((request) => request.url === '/_bulk');
    expect(bulks.length).toBeGreaterThanOrEqual(2);
    for (const bulk of bulks) expect(bulk.headers['content-encoding']).toBeUndefined();
    expect(bulks.some((bulk) => bulk.body.toString().includes('"if_seq_no"'))).toBe(true);
    expect(fenced.standIn.document('fz', '1')?.source).toEqual({ v: 2 });
    expect(fenced.standIn.document('fz', '2')?.source).toEqual({ w: 1 });
  });

  it('with fencing on, reads a gzip update to fence it and forwards its original bytes', async () => {
    await rawRequest(fenced.proxyUrl, { method: 'PUT', path: '/fs/_doc/1', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    fenced.standIn.resetLog();
    const body = gzipSync(JSON.stringify({ doc: { b: 2 } }));
    const answer = await rawRequest(fenced.proxyUrl, { method: 'POST', path: '/fs/_update/1', body, headers: { 'content-type': 'application/json', 'content-encoding': 'x-gzip' } });
    expect(answer.status).toBe(200);
    const update = fenced.standIn.requests.find((request) => request.url.startsWith('/fs/_update/1'));
    expect(update?.url).toMatch(/if_seq_no=\d+&if_primary_term=1/);
    expect(update?.wireBody).toEqual(body);
    expect(update?.headers['content-encoding']).toBe('x-gzip');
    expect(fenced.standIn.document('fs', '1')?.source).toEqual({ a: 1, b: 2 });
  });

  it('streams bodies it does not read untouched: a single write without fencing keeps even a coding it cannot decode', async () => {
    harness.standIn.resetLog();
    const body = brotliCompressSync('{"v":1}');
    await rawRequest(harness.proxyUrl, { method: 'PUT', path: '/untouched/_doc/1', body, headers: { 'content-type': 'application/json', 'content-encoding': 'br' } });
    const search = gzipSync('{"query":{"match_all":{}}}');
    await rawRequest(harness.proxyUrl, { method: 'POST', path: '/untouched/_search', body: search, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    const [write, searched] = forwarded(harness);
    expect(write?.wireBody).toEqual(body);
    expect(write?.headers['content-encoding']).toBe('br');
    expect(searched?.wireBody).toEqual(search);
    expect(searched?.headers['content-encoding']).toBe('gzip');
  });

  it('answers a zip bomb 413 in Elasticsearch shape, forwards nothing and never holds its expansion in memory', async () => {
    harness.standIn.resetLog();
    // 512 MiB of one bulk line's padding in about half a MiB: 32 gzip members of 16 MiB each.
    const member = gzipSync(Buffer.concat([Buffer.from('{"index":{"_index":"bomb","_id":"1"}}\n{"v":"'), Buffer.alloc(16 << 20, 0x61)]), { level: 9 });
    const bomb = Buffer.concat(Array.from({ length: 32 }, () => member));
    expect(bomb.length).toBeLessThan(MAX_BODY_BYTES);
    const peakBefore = process.resourceUsage().maxRSS;
    const answer = await post(harness, '/_bulk', bomb, { 'content-encoding': 'gzip' });
    expect(answer.status).toBe(413);
    expect(jsonOf(answer)).toMatchObject({
      error: { type: 'content_too_long_exception', reason: expect.stringContaining('inflates past proxy.max.body.bytes [1048576]') as unknown },
      status: 413,
    });
    // maxRSS is in KiB; inflating the whole body would add 512 MiB to the peak.
    expect((process.resourceUsage().maxRSS - peakBefore) / 1024).toBeLessThan(128);
    expect(harness.standIn.requests).toEqual([]);
    expect(await lockEntriesOf(harness, 'bomb', '1')).toBe(0);
    // Inflation stopped within one chunk of the limit.
    const rejected = logLines.find((line) => line.msg === 'request body rejected' && line.code === 'INFLATED_BODY_TOO_LARGE');
    expect(rejected).toMatchObject({ compressedBytes: bomb.length, maxBytes: MAX_BODY_BYTES });
    expect(rejected?.inflatedBytes).toBeGreaterThan(MAX_BODY_BYTES);
    expect(rejected?.inflatedBytes).toBeLessThanOrEqual(MAX_BODY_BYTES + INFLATE_CHUNK_BYTES);
  });

  it('answers a corrupt gzip body 400 naming the coding, with nothing forwarded and no lock taken', async () => {
    harness.standIn.resetLog();
    const valid = gzipSync(ndjson([{ index: { _index: 'corrupt', _id: '1' } }, { v: 1 }]));
    const answer = await post(harness, '/_bulk', valid.subarray(0, valid.length - 12), { 'content-encoding': 'gzip' });
    expect(answer.status).toBe(400);
    expect(jsonOf(answer)).toMatchObject({ error: { type: 'illegal_argument_exception', reason: expect.stringContaining('not valid [gzip] content') as unknown }, status: 400 });
    expect(harness.standIn.requests).toEqual([]);
    expect(await lockEntriesOf(harness, 'corrupt', '1')).toBe(0);
  });

  it('refuses Content-Encoding br on a bulk with 415 before any lock: nothing forwarded, the document free at once', async () => {
    harness.standIn.resetLog();
    const body = brotliCompressSync(ndjson([{ index: { _index: 'brotli', _id: '1' } }, { v: 1 }]));
    const answer = await post(harness, '/_bulk', body, { 'content-encoding': 'br' });
    expect(answer.status).toBe(415);
    expect(jsonOf(answer)).toMatchObject({ error: { type: 'unsupported_content_encoding_exception', reason: expect.stringContaining('[br]') as unknown }, status: 415 });
    expect(harness.standIn.requests).toEqual([]);
    expect(await lockEntriesOf(harness, 'brotli', '1')).toBe(0);
    const stacked = await post(harness, '/_bulk', gzipSync(gzipSync(ndjson([{ index: { _index: 'brotli', _id: '1' } }, { v: 2 }]))), { 'content-encoding': 'gzip, gzip' });
    expect(stacked.status).toBe(415);
    expect(harness.standIn.requests).toEqual([]);
    const plain = await post(harness, '/_bulk', ndjson([{ index: { _index: 'brotli', _id: '1' } }, { v: 3 }]), {});
    expect(jsonOf(plain)).toMatchObject({ errors: false });
    expect(harness.standIn.document('brotli', '1')?.source).toEqual({ v: 3 });
  });

  it('dead-letters the inflated lines of a gzip bulk, without Content-Encoding: the record reads as it replays', async () => {
    const stack = await startWriteStack({
      ...ZOOKEEPER_LOCKS.stackLocks(),
      settings: { lock: { backgroundTimeoutMs: 100 }, elasticsearch: { requestRetryCount: 0 } },
    });
    try {
      const proxy = proxyOf(stack);
      const gate = stack.standIn.gateDocument('dlq', 'busy');
      const holder = rawRequest(proxy.proxyUrl, { method: 'PUT', path: '/dlq/_doc/busy', body: '{"v":"holder"}', headers: { 'content-type': 'application/json' } });
      await gate.arrived(1);
      const lines = [{ index: { _index: 'dlq', _id: 'free' } }, { v: 1 }, { index: { _index: 'dlq', _id: 'busy' } }, { v: 2 }];
      const answer = await post(proxy, '/_bulk', gzipSync(ndjson(lines)), { 'content-encoding': 'gzip', 'X-Lock-Type': 'background' });
      expect(jsonOf(answer)).toMatchObject({ items: [{ index: { status: 201 } }, { index: { status: 429 } }] });
      const id = answer.headers['x-dead-letter-id'];
      expect(typeof id).toBe('string');
      const record = await new FileDeadLetterStore(stack.deadLetterDir).get(String(id));
      expect(record?.body).toEqual({ encoding: 'utf8', data: ndjson(lines.slice(2)).toString() });
      expect(record?.headers['content-encoding']).toBeUndefined();
      expect(record?.headers['content-type']).toBe(NDJSON);
      gate.remove();
      expect((await holder).status).toBe(201);
    } finally {
      await stack.close();
    }
  });
});
