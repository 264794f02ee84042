import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CHILD = join(import.meta.dirname, 'fatal-exit-child.ts');

/** The JSON destination is asynchronous: these show that exiting does not lose its buffer. */
describe('asynchronous log destination', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function linesAfter(mode: 'crash' | 'shutdown'): Promise<{ code: number; lines: Record<string, unknown>[] }> {
    dir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-log-'));
    const file = join(dir, 'log.jsonl');
    const code = await run(process.execPath, ['--import', 'tsx', CHILD, file, mode]).then(
      () => 0,
      (error: { code?: number }) => error.code ?? -1,
    );
    const text = await readFile(file, 'utf8');
    return { code, lines: text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>) };
  }

  it('logs an uncaught exception at fatal after every buffered line, then exits 1', async () => {
    const { code, lines } = await linesAfter('crash');
    expect(code).toBe(1);
    expect(lines.filter((line) => line.msg === 'buffered line')).toHaveLength(200);
    expect(lines.at(-1)).toMatchObject({ level: 60, msg: 'es-lock-proxy crashed', err: { message: 'boom' } });
  }, 30_000);

  it('writes every buffered line on an orderly exit', async () => {
    const { code, lines } = await linesAfter('shutdown');
    expect(code).toBe(0);
    expect(lines).toHaveLength(200);
  }, 30_000);
});
