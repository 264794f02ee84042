import { execFile } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HeldLock } from '../../../src/lock/lock-engine.js';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { eventually, startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { BACKGROUND, ndjson, send } from './write-client.js';

const OWNER = { host: 'test', pid: process.pid, requestId: 'blocker' };
const run = promisify(execFile);
const PYTHON_BULK = fileURLToPath(new URL('../../support/python/bulk_retries.py', import.meta.url));
/** Debian's interpreter, where `apt-get install python3-elasticsearch` puts the client (.ci/run installs it). */
const PYTHON = '/usr/bin/python3';
const NDJSON = { 'content-type': 'application/x-ndjson' };

/** Whole-request refusals Elasticsearch answers a `_bulk` with, in its REST error shape. */
const REFUSALS = [
  {
    status: 429,
    error: {
      type: 'es_rejected_execution_exception',
      reason: 'rejected execution of coordinating operation [coordinating_and_primary_bytes=0, replica_bytes=0, all_bytes=0, coordinating_operation_bytes=52, max_coordinating_and_primary_bytes=0]',
    },
  },
  { status: 503, error: { type: 'cluster_block_exception', reason: 'blocked by: [SERVICE_UNAVAILABLE/2/no master];' } },
  { status: 403, error: { type: 'security_exception', reason: 'action [indices:data/write/bulk] is unauthorized for user [writer]' } },
] as const;

function refuse(res: ServerResponse, status: number, error: Record<string, unknown>): void {
  res.writeHead(status, { 'content-type': 'application/json', 'X-elastic-product': 'Elasticsearch' });
  res.end(JSON.stringify({ error: { root_cause: [error], ...error }, status }));
}

type Item = Record<string, { _id: string; status: number; error?: Record<string, unknown> }>;

/** How the merged answer of a bulk whose later sub-bulks fail looks to the official bulk helpers. */
describe.each(LOCK_BACKENDS)('bulk answers of sub-bulks ($name locks)', (backend) => {
  const locks = backend.name;
  let stack: WriteStack;
  let url: string;
  beforeAll(async () => {
    stack = await startWriteStack({ ...backend.stackLocks(), settings: { lock: { foregroundTimeoutMs: 10_000, backgroundTimeoutMs: 10_000 } } });
    url = stack.urls[0]!;
  });
  afterAll(() => stack?.close());

  const subBulks = (): number => stack.standIn.requests.filter((request) => request.url === '/_bulk').length;

  /**
   * Sends [a, held, b] while `held` is locked by somebody else: a and b go as the first sub-bulk;
   * once it is answered, `onLater` sees the second one (held's) and may answer it itself.
   */
  async function bulkWithLaterSubBulk(index: string, onLater: (res: ServerResponse) => boolean) {
    const blocker: HeldLock = await stack.proxies[0]!.locks.acquire({ index, id: 'held' }, 'foreground', { timeoutMs: 5_000, owner: OWNER });
    const before = subBulks();
    const body = ndjson([{ index: { _index: index, _id: 'a' } }, { n: 0 }, { index: { _index: index, _id: 'held' } }, { n: 1 }, { index: { _index: index, _id: 'b' } }, { n: 2 }]);
    const answer = send(url, 'POST', '/_bulk', body, { ...NDJSON, ...BACKGROUND });
    await eventually(() => stack.standIn.requests.filter((request) => request.url === '/_bulk').slice(before)[0]?.status != null);
    const stop = stack.standIn.onRequest((request, res) => request.url === '/_bulk' && onLater(res));
    try {
      await blocker.release();
      return await answer;
    } finally {
      stop();
    }
  }

  it.each(REFUSALS)('a later sub-bulk refused whole with $status is answered per item with $status and Elasticsearch\'s error; nothing of it is written', async ({ status, error }) => {
    const index = `refused-${locks}-${status}`;
    const response = await bulkWithLaterSubBulk(index, (res) => {
      refuse(res, status, error);
      return true;
    });
    expect(response.status).toBe(200);
    expect(response.json.errors).toBe(true);
    expect(response.json.items).toEqual([
      { index: expect.objectContaining({ _id: 'a', status: 201 }) },
      { index: { _index: index, _id: 'held', status, error } },
      { index: expect.objectContaining({ _id: 'b', status: 201 }) },
    ]);
    expect(stack.standIn.document(index, 'held')).toBeUndefined();
    expect([stack.standIn.document(index, 'a')?.source, stack.standIn.document(index, 'b')?.source]).toEqual([{ n: 0 }, { n: 2 }]);
  });

  it('a later sub-bulk whose connection broke stays 502 upstream_connection_reset_exception per item (it may have been applied)', async () => {
    const index = `reset-${locks}`;
    const response = await bulkWithLaterSubBulk(index, (res) => {
      res.socket?.destroy();
      return true;
    });
    expect(response.status).toBe(200);
    const items = response.json.items as Item[];
    expect(items.map((item) => item.index!.status)).toEqual([201, 502, 201]);
    expect(items[1]!.index!.error).toMatchObject({ type: 'upstream_connection_reset_exception' });
  });

  it('the official client\'s helpers.bulk retries the items of a sub-bulk refused with 429 and ends with every document written', async () => {
    const index = `helper-${locks}`;
    const blocker: HeldLock = await stack.proxies[0]!.locks.acquire({ index, id: 'held' }, 'foreground', { timeoutMs: 5_000, owner: OWNER });
    const [rejected] = REFUSALS;
    let refusals = 0;
    const stop = stack.standIn.onRequest((request, res) => {
      if (refusals > 0 || request.url !== '/_bulk' || !request.body.toString().includes('"held"')) return false;
      refusals += 1;
      refuse(res, rejected.status, rejected.error);
      return true;
    });
    const client = new Client({ node: url, maxRetries: 0 });
    const ids = ['a', 'held', 'b', 'c'];
    const before = subBulks();
    try {
      const helper = client.helpers.bulk({
        datasource: ids.map((id) => ({ id, from: 'helper' })),
        onDocument: (doc) => ({ index: { _index: index, _id: doc.id } }),
        retries: 3,
        wait: 50,
      });
      // The free documents' sub-bulk is answered; then `held` is handed over and its sub-bulk refused.
      await eventually(() => stack.standIn.requests.filter((request) => request.url === '/_bulk').slice(before)[0]?.status != null);
      await blocker.release();
      const result = await helper;
      // `retry` counts the retried NDJSON lines: held's action and source.
      expect(result).toMatchObject({ total: ids.length, successful: ids.length, failed: 0, retry: 2 });
    } finally {
      stop();
      await client.close();
    }
    expect(refusals).toBe(1);
    for (const id of ids) expect(stack.standIn.document(index, id)?.source).toEqual({ id, from: 'helper' });
    expect(stack.standIn.history(index, 'held')).toHaveLength(1);
  });

  it('the Python client\'s helpers.streaming_bulk (max_retries) retries them too', async () => {
    const index = `python-${locks}`;
    const blocker: HeldLock = await stack.proxies[0]!.locks.acquire({ index, id: 'held' }, 'foreground', { timeoutMs: 5_000, owner: OWNER });
    const [rejected] = REFUSALS;
    let refusals = 0;
    const stop = stack.standIn.onRequest((request, res) => {
      if (refusals > 0 || request.url !== '/_bulk' || !request.body.toString().includes('"held"')) return false;
      refusals += 1;
      refuse(res, rejected.status, rejected.error);
      return true;
    });
    const ids = ['a', 'held', 'b'];
    const before = subBulks();
    try {
      const client = run(PYTHON, [PYTHON_BULK, url, index, ids.join(',')], { timeout: 60_000 });
      await eventually(() => stack.standIn.requests.filter((request) => request.url === '/_bulk').slice(before)[0]?.status != null, 30_000);
      await blocker.release();
      const output = JSON.parse((await client).stdout) as { version: string; results: { ok: boolean; status: number }[] };
      expect(output.version).toMatch(/^7\.1[4-9]\./);
      expect(output.results).toEqual(ids.map(() => expect.objectContaining({ ok: true })));
    } finally {
      stop();
    }
    expect(refusals).toBe(1);
    for (const id of ids) expect(stack.standIn.document(index, id)?.source).toEqual({ id, from: 'python' });
    expect(stack.standIn.history(index, 'held')).toHaveLength(1);
  });
});
