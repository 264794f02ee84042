import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { createDeadLetterRecord, type DeadLetterRecord } from '../../../src/deadletter/dead-letter-record.js';
import { FileDeadLetterStore } from '../../../src/deadletter/file-dead-letter-store.js';
import { LOCK_BACKENDS } from '../../support/lock-backends.js';
import { mountSmallFilesystem, smallFilesystemUnavailable, type SmallFilesystem } from '../../support/small-filesystem.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { cleanEnv } from '../cli/run-cli-process.js';
import { BACKGROUND, send, sendHolder } from '../write/write-client.js';

/**
 * What `append` promises (docs/operations.md#dead-letters): a record is acknowledged (the append
 * resolves, the client gets `X-Dead-Letter-Id`) only once its whole line is in the file and flushed;
 * an append that fails leaves the file as it was; a line torn by a crash is closed before the next
 * append. Each case meets the failure for real: a full filesystem, a file-size limit, `kill -9`, a
 * read-only mount.
 */

const NO_TMPFS = smallFilesystemUnavailable();
const DAY = new Date('2026-11-21T10:00:00.000Z');
const DAY_FILE = 'dead-letter-2026-11-21.jsonl';
const PAGE = 4096;

const CHILD = fileURLToPath(new URL('./append-child.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

function deadLetter(bodyBytes: number, id = 'doc'): DeadLetterRecord {
  return createDeadLetterRecord(
    {
      method: 'PUT',
      url: `/products/_doc/${id}`,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(`{"pad":"${'x'.repeat(bodyBytes)}"}`),
      priority: 'background',
      keys: [{ index: 'products', id }],
      attemptTimes: [DAY.getTime()],
      lastError: { code: 'LOCK_TIMEOUT', message: 'lock wait timed out' },
    },
    DAY,
  );
}

const mounted: SmallFilesystem[] = [];
const scratch: string[] = [];
afterEach(async () => {
  for (const filesystem of mounted.splice(0)) filesystem.unmount();
  await Promise.all(scratch.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

function smallFilesystem(bytes: number): SmallFilesystem {
  const filesystem = mountSmallFilesystem(bytes);
  mounted.push(filesystem);
  return filesystem;
}

async function scratchDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dlq-durability-'));
  scratch.push(dir);
  return dir;
}

describe.skipIf(NO_TMPFS !== null)(`a full filesystem${NO_TMPFS === null ? '' : ` (skipped: ${NO_TMPFS})`}`, () => {
  it('an append cut short by ENOSPC fails, leaves the file as it was, and the next append after space returns is whole and readable', async () => {
    const filesystem = smallFilesystem(64 * PAGE);
    const dir = join(filesystem.dir, 'dlq');
    const store = new FileDeadLetterStore(dir);
    const first = deadLetter(200);
    await store.append(first);
    const before = await readFile(join(dir, DAY_FILE), 'utf8');

    filesystem.fill(PAGE);
    await expect(store.append(deadLetter(16 * PAGE))).rejects.toMatchObject({ code: 'ENOSPC' });
    const after = await readFile(join(dir, DAY_FILE), 'utf8');
    expect({ bytes: after.length, unchanged: after === before }).toEqual({ bytes: before.length, unchanged: true });

    filesystem.free();
    const next = deadLetter(200);
    await store.append(next);
    const listing = await store.list();
    expect(listing.corruptLines).toEqual([]);
    expect(listing.records.map((record) => record.id)).toEqual([first.id, next.id]);
    expect(await store.get(next.id)).toEqual(next);
  });

  describe.each(LOCK_BACKENDS)('through the proxy ($name locks)', (locks) => {
    let stack: WriteStack | undefined;
    afterEach(async () => {
      await stack?.close();
      stack = undefined;
    });

    it('a dead letter the full disk cut short gets no X-Dead-Letter-Id; the next one gets one that `dlq list` shows and `dlq replay` writes', async () => {
      const filesystem = smallFilesystem(64 * PAGE);
      const dir = join(filesystem.dir, 'dlq');
      stack = await startWriteStack({
        ...locks.stackLocks(),
        settings: { lock: { backgroundTimeoutMs: 100 }, elasticsearch: { requestRetryCount: 0 }, proxy: { deadLetterDir: dir } },
      });
      const url = stack.urls[0]!;
      const gate = stack.standIn.gateDocument('products', 'busy');
      const holder = await sendHolder(gate, url, '/products/_doc/busy', { writer: 'holder' });

      filesystem.fill(PAGE);
      const cutShort = await send(url, 'PUT', '/products/_doc/busy', { writer: 'cut-short', pad: 'x'.repeat(16 * PAGE) }, BACKGROUND);
      expect(cutShort.status).toBe(429);
      expect(cutShort.headers.get('x-dead-letter-id')).toBeNull();

      filesystem.free();
      const kept = await send(url, 'PUT', '/products/_doc/busy', { writer: 'kept' }, BACKGROUND);
      expect(kept.status).toBe(429);
      const id = kept.headers.get('x-dead-letter-id');
      expect(id).toMatch(/^dlq-/);

      gate.release();
      expect((await holder.answer).status).toBe(201);

      const listed = await dlq(['list'], dir);
      expect(listed).toMatchObject({ code: 0, stderr: '' });
      expect(listed.stdout).toContain(id);
      expect(listed.stdout).toContain('1 record(s)');

      const replayed = await dlq(['replay', id!, '--proxy', url], dir);
      expect(replayed.stdout).toBe(`replayed ${id}: HTTP 200\n`);
      expect(replayed.code).toBe(0);
      expect(stack.standIn.document('products', 'busy')?.source).toEqual({ writer: 'kept' });
    });
  });
});

describe('a file-size limit (ulimit -f in a child process)', () => {
  it('an append cut short by EFBIG fails and is rolled back: a smaller record after it still fits and every acknowledged record reads back', async () => {
    const dir = await scratchDir();
    // 1 MiB: the second record crosses it, the first and third fit on their own.
    const run = await runChild(['bash', '-c', 'ulimit -f 1024 && exec "$@"', 'bash', process.execPath, '--import', TSX, CHILD, dir, '1000', String(2 << 20), '1000']);
    expect(run.code).toBe(0);
    const [first, crossing, third] = run.events.filter((event) => 'acked' in event || 'failed' in event);
    expect(first).toEqual({ acked: expect.any(String) });
    expect(crossing).toEqual({ failed: expect.any(String), code: 'EFBIG' });
    expect(third).toEqual({ acked: expect.any(String) });

    const listing = await new FileDeadLetterStore(dir).list();
    expect(listing.corruptLines).toEqual([]);
    expect(listing.records.map((record) => record.id)).toEqual([first!.acked, third!.acked]);
  });
});

describe('kill -9 in the middle of an append', () => {
  it('the torn line is never read as a record, and the next process appends whole records after it', async () => {
    const { dir, ackedBefore } = await killMidAppend();

    const store = new FileDeadLetterStore(dir);
    const torn = await store.list();
    expect(torn.records.map((record) => record.id)).toEqual([ackedBefore]);
    expect(torn.corruptLines).toEqual([{ file: DAY_FILE, line: 2, reason: 'torn write: the last line has no newline' }]);

    const next = deadLetter(200);
    await store.append(next);
    const another = deadLetter(300);
    await store.append(another);
    const listing = await store.list();
    expect(listing.records.map((record) => record.id)).toEqual([ackedBefore, next.id, another.id]);
    expect(listing.corruptLines).toHaveLength(1);
    expect(listing.corruptLines[0]).toMatchObject({ file: DAY_FILE, line: 2, reason: expect.stringMatching(/^not JSON/) });
    expect(await store.get(another.id)).toEqual(another);
  });
});

describe.skipIf(NO_TMPFS !== null)(`a read-only directory${NO_TMPFS === null ? '' : ` (skipped: ${NO_TMPFS})`}`, () => {
  it('an append fails with EROFS and nothing is acknowledged; what was kept still lists, and appends resume once it is writable', async () => {
    const filesystem = smallFilesystem(64 * PAGE);
    const dir = join(filesystem.dir, 'dlq');
    const store = new FileDeadLetterStore(dir);
    const first = deadLetter(200);
    await store.append(first);

    filesystem.remountReadOnly();
    await expect(store.append(deadLetter(200))).rejects.toMatchObject({ code: 'EROFS' });
    await expect(new FileDeadLetterStore(join(filesystem.dir, 'never-made')).append(deadLetter(200))).rejects.toMatchObject({ code: 'EROFS' });
    expect((await store.list()).records.map((record) => record.id)).toEqual([first.id]);

    filesystem.remountWritable();
    const next = deadLetter(200);
    await store.append(next);
    expect(await store.list()).toEqual({ records: [first, next], corruptLines: [] });
  });
});

interface ChildEvent {
  readonly appending?: string;
  readonly lineBytes?: number;
  readonly acked?: string;
  readonly failed?: string;
  readonly code?: string;
}

function childEvents(child: ChildProcess): { events: ChildEvent[]; stderr: () => string } {
  const events: ChildEvent[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) events.push(JSON.parse(line) as ChildEvent);
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return { events, stderr: () => stderr };
}

async function runChild(command: readonly string[]): Promise<{ code: number | null; events: ChildEvent[] }> {
  const [program, ...args] = command;
  const child = spawn(program!, args, { env: cleanEnv({ TSX_DISABLE_CACHE: '1' }), stdio: ['ignore', 'pipe', 'pipe'] });
  const output = childEvents(child);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`append child exited ${code}: ${output.stderr()}`);
  return { code, events: output.events };
}

/**
 * A child appends a small record (acknowledged), then a 32 MiB one, which Node writes in 512 KiB
 * pieces; the child is stopped as soon as the file has grown past the first record and killed with
 * SIGKILL if the second is not complete. Should the whole line already be there (the kill came too
 * late), it tries again in a fresh directory; a test that never manages to cut an append fails.
 */
async function killMidAppend(): Promise<{ dir: string; ackedBefore: string }> {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const dir = await scratchDir();
    const child = spawn(process.execPath, ['--import', TSX, CHILD, dir, '200', String(32 << 20)], {
      env: cleanEnv({ TSX_DISABLE_CACHE: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const output = childEvents(child);
    const big = await waitFor(() => output.events.find((event, index) => index > 0 && event.appending !== undefined));
    const acked = output.events.find((event) => event.acked !== undefined)?.acked;
    const file = join(dir, DAY_FILE);
    const sizeBefore = (await stat(file)).size;
    await waitFor(async () => ((await stat(file)).size > sizeBefore ? true : undefined));
    child.kill('SIGSTOP');
    const sizeAtKill = (await stat(file)).size;
    child.kill('SIGKILL');
    await exited;
    if (acked !== undefined && sizeAtKill < sizeBefore + big.lineBytes!) return { dir, ackedBefore: acked };
  }
  throw new Error('five children finished their append before they could be killed in its middle');
}

async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    await turn();
  }
}

async function dlq(args: readonly string[], dir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['dlq', ...args, '--set', `proxy.deadletter.dir=${dir}`], {
    cwd: process.cwd(),
    env: {},
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    signals: new EventEmitter(),
  });
  return { code, stdout, stderr };
}
