import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseBulkBody } from '../../../src/classify/bulk-parser.js';
import { classifyRoute } from '../../../src/classify/route-parser.js';
import type { LockKey } from '../../../src/lock/lock-engine.js';
import { startProxyRuntime, type ProxyRuntime } from '../../../src/server/proxy-runtime.js';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { testSettings } from '../../support/test-settings.js';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { borrowedEngine, waitForLockService } from '../../support/write-stack.js';
import { exchange, isElasticsearchError, Tally, thousands } from './fault-kit.js';
import { httpRequestBytes, sendRawBytes, type RawReply } from './raw-http.js';

const MAX_BODY_BYTES = 256 * 1024;
const HEADERS_TIMEOUT_MS = 600;
const BODY_IDLE_TIMEOUT_MS = 400;
const HOT_IDS = ['h0', 'h1', 'h2'];
const NUM_RUNS = Number(process.env.HOSTILE_RUNS ?? 250);
const PROPERTY_TIME_LIMIT_MS = 40_000;

// ---- generators -------------------------------------------------------------------------------

/** Percent-encodes every byte outside the unreserved set (lone surrogates become U+FFFD). */
function percentEncode(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += /[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

const idText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOT_IDS) },
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', '.', '..', 'a/b', '../x', '%', '%2F', ' ', '\u0000', '\u007f', '😀', 'a'.repeat(512), 'é'.repeat(257), 'x'.repeat(513)),
  fc.string({ unit: 'binary-ascii', minLength: 400, maxLength: 700 }),
);

/** A path segment in one of the ways a client might (mis)spell it. */
const segment = (text: fc.Arbitrary<string>): fc.Arbitrary<Buffer> =>
  fc.oneof(
    { weight: 12, arbitrary: text.map((t) => Buffer.from(percentEncode(Buffer.from(t, 'utf8')), 'latin1')) },
    text.map((t) => Buffer.from(t, 'utf8')),
    fc.uint8Array({ maxLength: 12 }).map((bytes) => Buffer.from(percentEncode(bytes), 'latin1')),
    fc.uint8Array({ maxLength: 6 }).map((bytes) => Buffer.from(bytes)),
  );

const indexText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('hot', 'fuzz') },
  fc.constantFrom('_all', '*', '.hidden', 'UPPER', '-x', '_doc', 'a,b', 'products*'),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);

const pathArb: fc.Arbitrary<Buffer> = fc
  .tuple(
    fc.constantFrom('doc', 'create', 'update', 'typed', 'typed-update', 'typed-create', 'bulk', 'index-bulk', 'auto', 'by-query', 'random'),
    segment(indexText),
    segment(idText),
    fc.array(segment(fc.string({ maxLength: 8 })), { maxLength: 5 }),
    fc.constantFrom('', '/', '?refresh=true', '?routing=x&pretty', '?%zz=1', '?', '#frag', '//'),
  )
  .map(([shape, index, id, extra, suffix]) => {
    const slash = Buffer.from('/');
    const join = (...parts: Buffer[]): Buffer => Buffer.concat(parts.flatMap((part) => [slash, part]));
    const words = (w: string): Buffer => Buffer.from(w);
    const body: Record<string, () => Buffer> = {
      doc: () => join(index, words('_doc'), id),
      create: () => join(index, words('_create'), id),
      update: () => join(index, words('_update'), id),
      typed: () => join(index, words('mytype'), id),
      'typed-update': () => join(index, words('mytype'), id, words('_update')),
      'typed-create': () => join(index, words('mytype'), id, words('_create')),
      bulk: () => join(words('_bulk')),
      'index-bulk': () => join(index, words('_bulk')),
      auto: () => join(index, words('_doc')),
      'by-query': () => join(index, words('_update_by_query')),
      random: () => (extra.length === 0 ? slash : join(...extra)),
    };
    return Buffer.concat([(body[shape] ?? body.random ?? (() => slash))(), Buffer.from(suffix)]);
  });

const methodArb = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('PUT', 'POST', 'DELETE') }, fc.constantFrom('GET', 'HEAD', 'PATCH', 'OPTIONS', 'BREW', 'put'));

const headerArb = fc.array(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.tuple(
        fc.constant('x-lock-type'),
        fc.oneof({ weight: 6, arbitrary: fc.constantFrom('foreground', 'background', 'fg', 'BG', 'Foreground') }, fc.constantFrom('', 'urgent', 'fg, bg'), fc.string({ maxLength: 10 })),
      ),
    },
    fc.tuple(
      fc.constant('content-type'),
      fc.constantFrom(
        'application/json',
        'application/x-ndjson',
        'application/json',
        'application/x-ndjson',
        'application/vnd.elasticsearch+x-ndjson;compatible-with=8',
        'application/vnd.elasticsearch+json;compatible-with=7',
        'application/vnd.elasticsearch+json;compatible-with=99',
        'text/plain',
        'application/json; charset=latin1',
        ';;;',
      ),
    ),
    fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/), fc.oneof({ weight: 5, arbitrary: fc.stringMatching(/^[\x21-\x7e]{0,30}$/) }, fc.string({ unit: 'binary-ascii', maxLength: 30 }))),
  ),
  { maxLength: 4 },
);

const sourceArb = fc.oneof(fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)), fc.constant('{"a":1}'));

const actionLine = fc.record({
  action: fc.constantFrom('index', 'create', 'update', 'delete', 'upsert', ''),
  index: fc.option(indexText, { nil: undefined }),
  id: fc.oneof(idText, fc.constant(undefined), fc.integer(), fc.constant(null), fc.constant([]), fc.constant({})),
});

const bulkArb: fc.Arbitrary<Buffer> = fc
  .tuple(fc.array(fc.tuple(actionLine, sourceArb), { minLength: 1, maxLength: 6 }), fc.constantFrom('\n', '\r\n'), fc.boolean())
  .map(([items, eol, trailing]) => {
    const lines = items.flatMap(([line, source]) => {
      const meta: Record<string, unknown> = {};
      if (line.index !== undefined) meta._index = line.index;
      if (line.id !== undefined) meta._id = line.id;
      const head = JSON.stringify({ [line.action]: meta });
      return line.action === 'delete' ? [head] : [head, source];
    });
    return Buffer.from(lines.join(eol) + (trailing ? eol : ''), 'utf8');
  });

const bodyArb: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 8, arbitrary: bulkArb },
  { weight: 4, arbitrary: sourceArb.map((s) => Buffer.from(s)) },
  fc.tuple(bulkArb, fc.nat()).map(([bulk, cut]) => bulk.subarray(0, cut % Math.max(1, bulk.length))),
  fc.constantFrom('{"index":{"_id":123}}\n{}\n', '{"index":[]}\n', '{"index":{"_index":true,"_id":"h0"}}\n{}\n', '["x"]\n', '5\n', 'null\n', '{"delete":{"_id":"h1","_index":"hot","extra":{"deep":1}}}\n', '{}\n{}\n', '\n\n\n').map((s) => Buffer.from(s)),
  fc.integer({ min: 30_000, max: 120_000 }).map((n) => Buffer.from(`{"index":{"_index":"hot","_id":"h0"}}\n{"big":"${'x'.repeat(n)}"}\n`)),
  fc.integer({ min: 100, max: 20_000 }).map((n) => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`)),
  fc.integer({ min: 100, max: 5_000 }).map((n) => Buffer.from(`{"index":{"_index":"hot","_id":"h1"}}\n${'{"a":'.repeat(n)}1${'}'.repeat(n)}\n`)),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.constant(Buffer.from([0x7b, 0x22, 0x69, 0x6e, 0x64, 0x65, 0x78, 0x22, 0x3a, 0x7b, 0x22, 0x5f, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x7d, 0x0a, 0x7b, 0x7d, 0x0a])),
  fc.constant(Buffer.alloc(0)),
);

interface HostileRequest {
  readonly method: string;
  readonly path: Buffer;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

const encodedSegment = (text: fc.Arbitrary<string>): fc.Arbitrary<string> => text.map((t) => percentEncode(Buffer.from(t, 'utf8')));
const docSource = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).map((o) => JSON.stringify(o));

/** Well-formed bulk bodies whose ids are hostile. */
const validBulkArb: fc.Arbitrary<Buffer> = fc
  .array(fc.tuple(fc.constantFrom('index', 'create', 'update', 'delete'), fc.constantFrom('hot', 'fuzz'), idText, docSource), { minLength: 1, maxLength: 6 })
  .map((items) =>
    Buffer.from(
      items
        .flatMap(([action, index, id, source]) => {
          const head = JSON.stringify({ [action]: { _index: index, _id: id } });
          if (action === 'delete') return [head];
          return [head, action === 'update' ? `{"doc":${source},"doc_as_upsert":true}` : source];
        })
        .join('\n') + '\n',
      'utf8',
    ),
  );

/** Requests a client might really send (right method for the route, sane headers), with hostile ids and bodies. */
const plausibleArb: fc.Arbitrary<HostileRequest> = fc
  .tuple(
    fc.constantFrom('index', 'create', 'update', 'delete', 'bulk', 'index-bulk', 'typed'),
    encodedSegment(indexText),
    encodedSegment(idText),
    fc.constantFrom('foreground', 'background', 'fg', 'bg'),
    fc.oneof({ weight: 3, arbitrary: validBulkArb }, bulkArb, bodyArb),
    fc.oneof({ weight: 3, arbitrary: docSource.map((d) => Buffer.from(d)) }, bodyArb),
  )
  .map(([shape, index, id, priority, bulkBody, docBody]) => {
    const compat = 'application/vnd.elasticsearch+json;compatible-with=7';
    const plan: Record<string, [string, string, string]> = {
      index: ['PUT', `/${index}/_doc/${id}`, 'application/json'],
      create: ['PUT', `/${index}/_create/${id}`, 'application/json'],
      update: ['POST', `/${index}/_update/${id}`, 'application/json'],
      delete: ['DELETE', `/${index}/_doc/${id}`, 'application/json'],
      bulk: ['POST', '/_bulk', 'application/x-ndjson'],
      'index-bulk': ['PUT', `/${index}/_bulk`, 'application/x-ndjson'],
      typed: ['PUT', `/${index}/mytype/${id}`, compat],
    };
    const [method, path, contentType] = plan[shape] ?? ['PUT', '/', 'application/json'];
    const headers: (readonly [string, string])[] = [['content-type', contentType], ['x-lock-type', priority]];
    if (contentType === compat) headers.push(['accept', compat]);
    const body = method === 'DELETE' ? Buffer.alloc(0) : contentType === 'application/x-ndjson' ? bulkBody : shape === 'update' ? Buffer.from(`{"doc":${docBody.toString()},"doc_as_upsert":true}`) : docBody;
    return { method, path: Buffer.from(path, 'latin1'), headers, body };
  });

const requestArb: fc.Arbitrary<HostileRequest> = fc.oneof(
  { weight: 3, arbitrary: plausibleArb },
  { weight: 2, arbitrary: fc.record({ method: methodArb, path: pathArb, headers: headerArb, body: bodyArb }) },
);

/** A valid item and one with an empty `_id` (once, its valid key stayed locked until restart). */
const LEAKING_BULK: HostileRequest = {
  method: 'POST',
  path: Buffer.from('/_bulk'),
  headers: [['content-type', 'application/x-ndjson']],
  body: Buffer.from('{"index":{"_index":"fuzz","_id":"leak"}}\n{}\n{"index":{"_index":"zzz","_id":""}}\n{}\n'),
};

/** Keys a request names as the proxy reads it (none when it cannot be classified or parsed). */
function keysNamedBy(request: HostileRequest): LockKey[] {
  try {
    const headers = Object.fromEntries(request.headers.map(([name, value]) => [name.toLowerCase(), value]));
    const route = classifyRoute(request.method, request.path.toString('latin1'), headers);
    // An empty segment names no lockable document: the proxy refuses it with a 400 before any lock.
    if (route.kind === 'single') return route.index === '' || route.id === '' ? [] : [{ index: route.index, id: route.id }];
    if (route.kind !== 'bulk') return [];
    return parseBulkBody(request.body, route.defaultIndex, { allowTypeMetadata: route.typed })
      .filter((item) => item.id !== null && item.id !== '' && item.index !== '')
      .map((item) => ({ index: item.index, id: item.id ?? '' }));
  } catch {
    return [];
  }
}

/**
 * After any 4xx answer, every key the request named can be locked at once from another proxy
 * (a 429 is not "fine" if it left a lock behind). The hot keys are also written concurrently by
 * the hot writer, whose holds last a few milliseconds: the wait allowed covers those, not a leak.
 */
async function expectNoLockLeft(other: ProxyRuntime, request: HostileRequest, reply: RawReply): Promise<void> {
  for (const key of keysNamedBy(request)) {
    const held = await other.locks
      .acquire(key, 'foreground', { timeoutMs: 1_500, owner: { host: 'test', pid: process.pid, requestId: 'leak-check' } })
      .catch((error: unknown) => {
        throw new Error(`${reply.status} answer to ${request.method} ${request.path.toString('latin1').slice(0, 120)} left ${key.index}/${key.id} locked: ${String(error)}`);
      });
    await held.release();
  }
}

// ---- the test ---------------------------------------------------------------------------------

describe.each(LOCK_BACKENDS)('hostile input end to end ($name locks)', (locks) => {
  let standIn: EsStandIn;
  let target: ProxyRuntime;
  let hotWriter: ProxyRuntime;
  let deadLetterDir: string;

  beforeAll(async () => {
    standIn = await startEsStandIn({ writeLatencyMs: 3 });
    deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-dlq-'));
    const inProcess = locks.name === 'in-process';
    const settings = testSettings({
      zookeeper: {
        servers: inProcess ? '127.0.0.1:1' : inject('zookeeperConnect'),
        lockRoot: `/hostile-${Date.now().toString(36)}`,
        sessionTimeoutMs: 4_000,
      },
      lock: { foregroundTimeoutMs: 2_000, backgroundTimeoutMs: 500 },
      elasticsearch: { hosts: [standIn.url], requestRetryCount: 0 },
      // By-query writes cannot be locked per document; rejecting them keeps the lock oracle exact.
      proxy: { deadLetterDir, maxBodyBytes: MAX_BODY_BYTES, upstreamTimeoutMs: 5_000, byQueryPolicy: 'reject', lockService: locks.name },
    });
    const edge = { headersTimeoutMs: HEADERS_TIMEOUT_MS, bodyIdleTimeoutMs: BODY_IDLE_TIMEOUT_MS };
    target = await startProxyRuntime(settings, pino({ level: 'silent' }), { edge });
    // In-process locks exist per process: the hot writer is a second front-end on the same engine.
    hotWriter = await startProxyRuntime(settings, pino({ level: 'silent' }), inProcess ? { lockEngine: borrowedEngine(target.locks) } : {});
    await Promise.all([waitForLockService(target), waitForLockService(hotWriter)]);
  });

  afterAll(async () => {
    await hotWriter?.close();
    await target?.close();
    await standIn?.stop();
    if (deadLetterDir !== undefined) await rm(deadLetterDir, { recursive: true, force: true });
  });

  it('random requests: never a crash, never a proxy-made 5xx, never a write overlapping a locked writer', async () => {
    const hotUrl = `http://127.0.0.1:${hotWriter.proxyAddress.port}`;
    const hotTally = new Tally();
    let stop = false;
    const hot = Promise.all(
      HOT_IDS.map(async (id) => {
        for (let n = 0; !stop; n++) hotTally.record(await exchange(`${hotUrl}/hot/_doc/${id}`, { method: 'PUT', body: JSON.stringify({ n }) }), id);
      }),
    );
    const byStatus = new Map<number, number>();
    let probe = 0;
    let upstream5xx = 0;
    try {
      await fc.assert(
        fc.asyncProperty(requestArb, async ({ method, path, headers, body }) => {
          const id = `p${probe++}`;
          const reply = await sendRawBytes(target.proxyAddress.port, { pieces: [httpRequestBytes(method, path, [...headers, ['x-probe', id]], body)] });
          byStatus.set(reply.status, (byStatus.get(reply.status) ?? 0) + 1);
          if (reply.empty) throw new Error(`no answer to ${method} ${path.toString('latin1').slice(0, 200)}`);
          if (reply.status >= 400 && reply.status < 500) await expectNoLockLeft(hotWriter, { method, path, headers, body }, reply);
          if (reply.status < 500) return;
          const upstream = standIn.requests.find((request) => request.headers['x-probe'] === id);
          if (upstream?.status === reply.status) {
            upstream5xx++;
            return;
          }
          throw new Error(`proxy answered ${reply.status} to ${method} ${path.toString('latin1').slice(0, 200)}: ${reply.body.slice(0, 400)}`);
        }),
        // The property run stops itself 20 s before the test's 60 s timeout, so the checks after it
        // (the hot writers drain, the overlap oracle, the tally) still run when a round is slow.
        { numRuns: NUM_RUNS, endOnFailure: true, interruptAfterTimeLimit: PROPERTY_TIME_LIMIT_MS, examples: [[LEAKING_BULK]] },
      );
    } finally {
      stop = true;
      await hot;
    }
    const alive = await exchange(`http://127.0.0.1:${target.proxyAddress.port}/`, { method: 'GET' });
    expect(alive.kind === 'answered' && alive.answer.status).toBe(200);
    const overlapping = new Set(standIn.overlaps.examples.flatMap((example) => example.requests));
    const suspects = standIn.requests.filter((request) => overlapping.has(`${request.method} ${request.url}`) && request.headers['x-probe'] !== undefined);
    expect(standIn.overlaps.examples, JSON.stringify(suspects.map((r) => ({ url: r.url, headers: r.headers, body: r.body.toString().slice(0, 200) })))).toEqual([]);
    expect(hotTally.unexpected).toEqual([]);
    expect(hotTally.count(200) + hotTally.count(201)).toBeGreaterThan(0);
    const statuses = [...byStatus.entries()].sort(([a], [b]) => a - b).map(([s, c]) => `${s}: ${c}`).join(', ');
    console.log(
      `hostile-input (${locks.name}): ${thousands(probe)} random requests (${statuses}), ${upstream5xx} upstream 5xx passed through, 0 proxy 5xx, ` +
        `${thousands(hotTally.total)} concurrent hot-key writes, ${standIn.overlaps.count} overlaps, proxy alive`,
    );
  });

  it('slow-loris clients are cut off with 408, oversized bodies with 413; nothing forwarded', async () => {
    const port = target.proxyAddress.port;
    const before = standIn.requests.length;
    const headTrickle = [...'PUT /hot/_doc/h0 HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n'].map((c) => Buffer.from(c));
    const slowHeaders = await sendRawBytes(port, { pieces: headTrickle, gapMs: 50, timeoutMs: 10_000 });
    const slowBody = await sendRawBytes(port, {
      pieces: [Buffer.from('PUT /hot/_doc/h0 HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 20\r\n\r\n{"a"'), Buffer.from(':'), Buffer.from('1')],
      gapMs: BODY_IDLE_TIMEOUT_MS * 3,
      timeoutMs: 10_000,
    });
    const declared = await sendRawBytes(port, {
      pieces: [Buffer.from(`POST /_bulk HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-ndjson\r\ncontent-length: ${MAX_BODY_BYTES + 1}\r\n\r\n{"index":`)],
    });
    const chunkedBig = Buffer.alloc(MAX_BODY_BYTES + 1024, 'a');
    const chunked = await sendRawBytes(port, {
      pieces: [
        Buffer.from('POST /hot/_doc/h1 HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n'),
        Buffer.concat([Buffer.from(`${chunkedBig.length.toString(16)}\r\n`), chunkedBig, Buffer.from('\r\n0\r\n\r\n')]),
      ],
    });
    const expectCut = (reply: RawReply, status: number, type: string): void => {
      expect(reply.status, reply.body).toBe(status);
      expect(isElasticsearchError({ status: reply.status, body: reply.body, ms: reply.ms }, [type])).toBe(true);
    };
    expectCut(slowHeaders, 408, 'request_timeout_exception');
    expect(slowHeaders.ms).toBeLessThan(HEADERS_TIMEOUT_MS * 2 + 500);
    expectCut(slowBody, 408, 'request_timeout_exception');
    expectCut(declared, 413, 'content_too_long_exception');
    expectCut(chunked, 413, 'content_too_long_exception');
    expect(standIn.requests.length).toBe(before);
    console.log(
      `hostile-input: slow headers 408 after ${Math.round(slowHeaders.ms)} ms, slow body 408 after ${Math.round(slowBody.ms)} ms, ` +
        'oversized declared/chunked bodies 413, 0 forwarded',
    );
  });
});
