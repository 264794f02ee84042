import { afterEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/http/response-options/filter-json.js';
import { prettyJson } from '../../../src/http/response-options/pretty-json.js';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { ndjson, sendHolder } from './write-client.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };
const PARTIAL_BULK = ndjson([{ index: { _id: 'a' } }, { v: 1 }, { index: { _id: 'hot' } }, { v: 2 }, { create: { _id: 'c' } }, { v: 3 }]);

/** The raw answer: these tests compare bytes, not parsed JSON. */
async function sendRaw(url: string, method: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body === undefined ? {} : { body }) });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/**
 * Every answer the proxy composes or merges honours the request's `filter_path` and `pretty` as
 * Elasticsearch would (errors are pretty-printed but never filtered); answers the proxy only relays
 * stay byte for byte; the sub-bulks it forwards carry neither parameter, so the merge sees every item.
 */
describe.each(LOCK_BACKENDS)('response options on composed answers ($name locks)', (locks) => {
  let stack: WriteStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  /** A stack whose document products/hot is held by a running write: bulks naming it are partial. */
  async function withHotDocumentHeld(): Promise<{ url: string; release: () => Promise<void> }> {
    stack = await startWriteStack({ ...locks.stackLocks(), settings: { lock: { foregroundTimeoutMs: 300 } } });
    const url = stack.urls[0]!;
    const gate = stack.standIn.gateDocument('products', 'hot');
    const { answer: running } = await sendHolder(gate, url, '/products/_doc/hot', { writer: 'holder' });
    return {
      url,
      release: async () => {
        gate.release();
        await running;
      },
    };
  }

  const subBulkUrls = (): string[] => stack!.standIn.requests.filter((request) => request.url.includes('_bulk')).map((request) => request.url);

  it('a partial bulk with filter_path=items.*.error returns only the failing items’ errors; the sub-bulk went unfiltered', async () => {
    const { url, release } = await withHotDocumentHeld();
    // Uncompressed, so that content-length can be checked against the text (fetch offers gzip otherwise).
    const answer = await sendRaw(`${url}/products/_bulk?filter_path=items.*.error`, 'POST', PARTIAL_BULK, { ...NDJSON, 'accept-encoding': 'identity' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({
      items: [{ index: { error: { type: 'lock_wait_timeout_exception', reason: expect.stringContaining('[products][hot]') } } }],
    });
    expect(answer.headers.get('content-length')).toBe(String(Buffer.byteLength(answer.text)));
    expect(subBulkUrls()).toEqual(['/products/_bulk']);
    await release();
  });

  it('filter_path=errors,items.*.status keeps just those fields; other parameters still reach Elasticsearch', async () => {
    const { url, release } = await withHotDocumentHeld();
    const answer = await sendRaw(`${url}/products/_bulk?refresh=wait_for&filter_path=errors,items.*.status`, 'POST', PARTIAL_BULK, NDJSON);
    expect(answer.text).toBe(JSON.stringify({ errors: true, items: [{ index: { status: 201 } }, { index: { status: 429 } }, { create: { status: 201 } }] }));
    expect(subBulkUrls()).toEqual(['/products/_bulk?refresh=wait_for']);
    await release();
  });

  it('pretty and an exclusion on a merged bulk: Elasticsearch’s pretty format, line feed at the end', async () => {
    const { url, release } = await withHotDocumentHeld();
    const answer = await sendRaw(`${url}/products/_bulk?pretty&filter_path=-took,-items.*._version,-items.*._seq_no,-items.*._primary_term,-items.*._shards`, 'POST', PARTIAL_BULK, NDJSON);
    expect(answer.text).toBe(prettyJson(JSON.parse(answer.text) as JsonObject));
    const parsed = JSON.parse(answer.text) as { took?: number; items: Record<string, Record<string, unknown>>[] };
    expect(answer.text).toMatch(/^\{\n {2}"errors" : true,\n {2}"items" : \[\n/);
    expect(parsed.took).toBeUndefined();
    expect(parsed.items.map((item) => Object.values(item)[0]!.status)).toEqual([201, 429, 201]);
    expect(subBulkUrls()).toEqual(['/products/_bulk']);
    await release();
  });

  it('a 429 lock timeout is pretty-printed when asked, never filtered (Elasticsearch does not filter errors)', async () => {
    const { url, release } = await withHotDocumentHeld();
    const plain = await sendRaw(`${url}/products/_doc/hot?filter_path=took`, 'PUT', '{"writer":"late"}');
    expect(plain.status).toBe(429);
    const error = JSON.parse(plain.text) as Record<string, unknown>;
    expect(error).toMatchObject({ status: 429, error: { type: 'lock_wait_timeout_exception', root_cause: [{ type: 'lock_wait_timeout_exception' }] } });
    expect(plain.text).toBe(JSON.stringify(error));

    const pretty = await sendRaw(`${url}/products/_doc/hot?filter_path=took&pretty=true`, 'PUT', '{"writer":"late"}');
    expect(pretty.status).toBe(429);
    expect(pretty.headers.get('retry-after')).toBe('1');
    expect(pretty.text).toBe(prettyJson(JSON.parse(pretty.text) as JsonObject));
    expect(JSON.parse(pretty.text)).toMatchObject({ status: 429, error: { type: 'lock_wait_timeout_exception' } });
    expect(stack!.standIn.requests.filter((request) => request.body.toString().includes('late'))).toHaveLength(0);
    await release();
  });

  it('answers relayed from Elasticsearch stay byte for byte, and reach it with the client’s parameters', async () => {
    stack = await startWriteStack(locks.stackLocks());
    const odd = '{ "_index":"products",  "result" : "created" ,"_id":"1"}';
    stack.standIn.onRequest((request, res) => {
      if (request.method !== 'PUT' && !request.url.includes('_bulk')) return false;
      res.writeHead(201, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
      res.end(odd);
      return true;
    });
    const single = await sendRaw(`${stack.urls[0]}/products/_doc/1?filter_path=result&pretty`, 'PUT', '{}');
    expect(single).toMatchObject({ status: 201, text: odd });
    const bulk = await sendRaw(`${stack.urls[0]}/_bulk?filter_path=took&pretty`, 'POST', ndjson([{ index: { _index: 'products', _id: '2' } }, {}]), NDJSON);
    expect(bulk).toMatchObject({ status: 201, text: odd });
    const forwarded = stack.standIn.requests.filter((request) => !request.url.endsWith('/_alias')).map((request) => request.url);
    expect(forwarded).toEqual(['/products/_doc/1?filter_path=result&pretty', '/_bulk?filter_path=took&pretty']);
  });

  it('a sub-bulk refused as a whole: Elasticsearch’s error, pretty as the client asked, unfiltered', async () => {
    const { url, release } = await withHotDocumentHeld();
    const refusal = { error: { root_cause: [{ type: 'security_exception', reason: 'no' }], type: 'security_exception', reason: 'no' }, status: 403 };
    stack!.standIn.onRequest((request, res) => {
      if (!request.url.includes('_bulk')) return false;
      res.writeHead(403, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
      res.end(JSON.stringify(refusal));
      return true;
    });
    const answer = await sendRaw(`${url}/products/_bulk?pretty&filter_path=items`, 'POST', PARTIAL_BULK, NDJSON);
    expect(answer.status).toBe(403);
    expect(answer.text).toBe(prettyJson(refusal));
    expect(subBulkUrls()).toEqual(['/products/_bulk']);
    await release();
  });

  it('an unreadable pretty or error_trace is refused 400 as Elasticsearch refuses it, before any lock or forwarding', async () => {
    stack = await startWriteStack(locks.stackLocks());
    for (const [path, body, headers] of [
      ['/products/_doc/1?pretty=yes', '{}', {}],
      ['/products/_bulk?error_trace=on', PARTIAL_BULK, NDJSON],
    ] as const) {
      const answer = await sendRaw(`${stack.urls[0]}${path}`, path.includes('_bulk') ? 'POST' : 'PUT', body, headers);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({ status: 400, error: { type: 'illegal_argument_exception', reason: expect.stringMatching(/^Failed to parse value \[(yes|on)\] as only \[true\] or \[false\] are allowed\.$/) } });
      expect(answer.text).not.toContain('\n');
    }
    expect(stack.standIn.requests).toHaveLength(0);
    expect((await stack.proxies[0]!.locks.inspect({ index: 'products', id: '1' })).holder).toBeNull();
  });
});
