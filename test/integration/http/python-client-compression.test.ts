import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ZOOKEEPER_LOCKS } from '../../support/lock-backends.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { sendHolder } from '../write/write-client.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../support/python/compressed_writes.py', import.meta.url));
/** Debian's interpreter, where `apt-get install python3-elasticsearch` puts the client (.ci/run installs it). */
const PYTHON = '/usr/bin/python3';
const FOREGROUND_TIMEOUT_MS = 300;

async function lockTimeouts(adminUrl: string): Promise<number> {
  const samples = parsePrometheusText(await (await fetch(`${adminUrl}/metrics`)).text());
  return sampleValue(samples, 'es_lock_proxy_lock_timeouts_total', { priority: 'foreground' });
}

/**
 * Debian's python3-elasticsearch with `http_compress=True` (gzip bodies): single writes and
 * `helpers.streaming_bulk` through the proxy on real ZooKeeper locks, one bulk document held by
 * another writer until the bulk has been answered 429 for it; streaming_bulk retries it.
 */
describe('the Python client with http_compress=True through the proxy', () => {
  let stack: WriteStack;
  beforeAll(async () => {
    stack = await startWriteStack({ ...ZOOKEEPER_LOCKS.stackLocks(), settings: { lock: { foregroundTimeoutMs: FOREGROUND_TIMEOUT_MS } } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('writes every document with streaming_bulk retrying its 429 items, no overlap', async () => {
    const url = stack.urls[0] ?? '';
    const adminUrl = stack.adminUrls[0] ?? '';
    const gate = stack.standIn.gateDocument('py', 'held');
    const holder = await sendHolder(gate, url, '/py/_doc/held', { from: 'holder' });
    const ids = ['held', ...Array.from({ length: 20 }, (_, n) => `doc-${n}`)];
    const timeoutsBefore = await lockTimeouts(adminUrl);
    const client = run(PYTHON, [SCRIPT, url, 'py', ids.join(',')], { timeout: 60_000 });
    try {
      await vi.waitFor(async () => expect(await lockTimeouts(adminUrl)).toBeGreaterThan(timeoutsBefore), { timeout: 30_000, interval: 50 });
    } finally {
      gate.remove();
    }
    const output = JSON.parse((await client).stdout) as { version: string; results: { ok: boolean; status: number }[] };
    expect(output.version).toMatch(/^7\.1[4-9]\./);
    expect(output.results).toHaveLength(ids.length);
    expect(output.results.every((result) => result.ok)).toBe(true);
    expect((await holder.answer).status).toBeLessThan(300);

    // The client's own single writes with a body; the holder was sent uncompressed by the test.
    const singles = stack.standIn.requests.filter((request) => request.url.startsWith('/py/') && request.url.includes('/single-a'));
    expect(singles.map((request) => `${request.method} ${request.url.split('?')[0]} ${request.headers['content-encoding']}`)).toEqual([
      'PUT /py/_doc/single-a gzip',
      'POST /py/_update/single-a gzip',
    ]);
    expect(stack.standIn.document('py', 'single-a')?.source).toEqual({ name: 'lamp', n: 2 });
    expect(stack.standIn.document('py', 'single-b')).toBeUndefined();
    for (const id of ids) expect(stack.standIn.document('py', id)?.source).toEqual({ id, from: 'bulk' });
    expect(stack.standIn.history('py', 'held').map((write) => (write.body as { from?: string } | null)?.from)).toEqual(['holder', 'bulk']);
    expect(stack.standIn.overlaps.count).toBe(0);
  });
});
