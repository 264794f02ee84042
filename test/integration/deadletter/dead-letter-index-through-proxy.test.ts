import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { FileDeadLetterStore } from '../../../src/deadletter/file-dead-letter-store.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { BACKGROUND, send } from '../write/write-client.js';

const INDEX = 'proxy-dead-letters';

function textSink(): { write(text: string): void; text(): string } {
  const chunks: string[] = [];
  return { write: (text) => void chunks.push(text), text: () => chunks.join('') };
}

describe.each(LOCK_BACKENDS)('proxy.deadletter.index through the proxy ($name locks)', (locks) => {
  let stack: WriteStack | undefined;
  let cliDir: string | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
    if (cliDir !== undefined) await rm(cliDir, { recursive: true, force: true });
    cliDir = undefined;
  });

  it('dead-letters background writes of two proxies into the index; `dlq` on another host lists and replays them', async () => {
    stack = await startWriteStack({
      ...locks.stackLocks(),
      proxies: 2,
      settings: { lock: { backgroundTimeoutMs: 150 }, elasticsearch: { requestRetryCount: 1 }, proxy: { deadLetterIndex: INDEX } },
    });
    const { standIn, urls } = stack;
    const gate = standIn.gateDocument('products', 'kpi');
    const running = send(urls[0]!, 'PUT', '/products/_doc/kpi', { writer: 'holder' });
    await gate.arrived(1);

    const ids: string[] = [];
    for (const [n, url] of urls.entries()) {
      const answer = await send(url, 'PUT', '/products/_doc/kpi', { writer: `late-${n}` }, BACKGROUND);
      expect(answer.status).toBe(429);
      const id = answer.headers.get('x-dead-letter-id');
      expect(id).toBeTruthy();
      ids.push(id!);
    }
    // In the index, as soon as the 429 was answered (refresh=wait_for), and in the local file.
    for (const id of ids) {
      expect(standIn.document(INDEX, id)?.source).toMatchObject({ id, method: 'PUT', path: '/products/_doc/kpi', priority: 'background', keys: [{ index: 'products', id: 'kpi' }], replayedAt: null });
      expect(await new FileDeadLetterStore(stack.deadLetterDir).get(id)).not.toBeNull();
    }
    gate.release();
    await running;

    // An operator elsewhere: an empty dead-letter dir of its own, the shared index.
    cliDir = await mkdtemp(join(tmpdir(), 'dlq-cli-'));
    const dlq = async (...args: string[]) => {
      const out = textSink();
      const err = textSink();
      const flags = ['--set', `proxy.deadletter.dir=${cliDir}`, '--set', `proxy.deadletter.index=${INDEX}`, '--set', `elasticsearch.hosts=${standIn.url}`];
      const exitCode = await runCli(['dlq', ...args, ...flags], { cwd: process.cwd(), env: {}, stdout: out, stderr: err, signals: new EventEmitter() });
      return { exitCode, out: out.text(), err: err.text() };
    };
    const listed = await dlq('list');
    expect(listed.exitCode).toBe(0);
    expect(listed.out).toContain(`${ids[0]} `);
    expect(listed.out).toContain(`${ids[1]} `);
    expect(listed.out).toContain('2 record(s)');

    const replayed = await dlq('replay', '--all', '--proxy', urls[1]!);
    expect(replayed.out).toContain(`replayed ${ids[0]}: HTTP 200`);
    expect(replayed.out).toContain(`replayed ${ids[1]}: HTTP 200`);
    expect(replayed.exitCode).toBe(0);
    expect(standIn.document('products', 'kpi')?.source).toEqual({ writer: 'late-1' });
    for (const id of ids) expect(standIn.document(INDEX, id)?.source).toMatchObject({ replayStatus: '200', replayedAt: expect.any(String) });
    expect((await dlq('list')).out).toContain('0 record(s)');
  });
});
