import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { createDeadLetterRecord, type DeadLetterRecord } from '../../../src/deadletter/dead-letter-record.js';
import { FileDeadLetterStore } from '../../../src/deadletter/file-dead-letter-store.js';

/**
 * `dlq replay` never lends the operator's credentials to a record that arrived without any unless
 * told to with --authorize-anonymous: such a write would land with the operator's rights.
 */
describe('dlq replay and credentials', () => {
  let dir: string;
  let store: FileDeadLetterStore;
  let proxy: Server;
  let proxyUrl: string;
  let received: IncomingHttpHeaders[];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dlq-credentials-'));
    store = new FileDeadLetterStore(dir);
    received = [];
    // Plays the proxy a replay is sent through: records what arrives, answers like Elasticsearch.
    proxy = createServer((req, res) => {
      received.push(req.headers);
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"result":"updated"}'));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  async function recordOf(headers: IncomingHttpHeaders, id: string): Promise<DeadLetterRecord> {
    const record = createDeadLetterRecord({
      method: 'PUT',
      url: `/products/_doc/${id}`,
      headers: { 'content-type': 'application/json', ...headers },
      body: Buffer.from('{"v":1}'),
      priority: 'background',
      keys: [{ index: 'products', id }],
      attemptTimes: [Date.now()],
      lastError: { code: 'LOCK_TIMEOUT', message: 'lock wait timed out' },
    });
    await store.append(record);
    return record;
  }

  async function replay(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli(['dlq', 'replay', ...args, '--proxy', proxyUrl, '--set', `proxy.deadletter.dir=${dir}`], {
      cwd: process.cwd(),
      env: {},
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      signals: new EventEmitter(),
    });
    return { code, stdout, stderr };
  }

  const errorLines = (stderr: string): string[] => stderr.split('\n').filter((line) => line.startsWith('es-lock-proxy:'));

  it('refuses, in one line, to send an anonymous record with the operator’s Authorization; nothing is sent or marked', async () => {
    const record = await recordOf({}, 'anonymous');
    const run = await replay(record.id, '--header', 'Authorization: ApiKey b3BlcmF0b3I=');
    expect(run.code).toBe(1);
    expect(errorLines(run.stderr)).toEqual([
      `es-lock-proxy: dlq replay: refused ${record.id} arrived without credentials and would be sent with yours (Authorization); pass --authorize-anonymous to send it so, or replay it without them`,
    ]);
    expect(run.stderr).not.toContain('b3BlcmF0b3I=');
    expect(received).toHaveLength(0);
    expect((await store.get(record.id))?.replayedAt).toBeNull();
  });

  it('any credential header counts, whatever its case (x-api-key, cookie …)', async () => {
    const record = await recordOf({}, 'anonymous-key');
    const run = await replay(record.id, '--header', 'X-Api-Key: k', '--header', 'x-opaque-id: op');
    expect(run.code).toBe(1);
    expect(errorLines(run.stderr)[0]).toContain('would be sent with yours (X-Api-Key)');
    expect(received).toHaveLength(0);
  });

  it('sends it with the operator’s credentials when told to with --authorize-anonymous', async () => {
    const record = await recordOf({}, 'anonymous-ok');
    const run = await replay(record.id, '--header', 'Authorization: ApiKey b3BlcmF0b3I=', '--authorize-anonymous');
    expect(run).toMatchObject({ code: 0, stdout: `replayed ${record.id}: HTTP 200\n` });
    expect(received.map((headers) => headers.authorization)).toEqual(['ApiKey b3BlcmF0b3I=']);
    expect((await store.get(record.id))?.replayedAt).not.toBeNull();
  });

  it('sends an anonymous record anonymously, and a record that had credentials with the operator’s, without the flag', async () => {
    const anonymous = await recordOf({}, 'plain');
    expect((await replay(anonymous.id)).code).toBe(0);
    const authenticated = await recordOf({ authorization: 'Basic dXNlcjpwdw==' }, 'authenticated');
    expect((await replay(authenticated.id, '--header', 'Authorization: ApiKey b3BlcmF0b3I=')).code).toBe(0);
    expect(received.map((headers) => headers.authorization)).toEqual([undefined, 'ApiKey b3BlcmF0b3I=']);
  });

  it('replay --all refuses only the anonymous records and replays the rest', async () => {
    const anonymous = await recordOf({}, 'one');
    const authenticated = await recordOf({ 'x-api-key': 'client-key' }, 'two');
    const run = await replay('--all', '--header', 'Authorization: ApiKey b3BlcmF0b3I=');
    expect(run.code).toBe(1);
    expect(errorLines(run.stderr)).toEqual([expect.stringContaining(`refused ${anonymous.id} arrived without credentials`)]);
    expect(run.stdout).toContain(`replayed ${authenticated.id}: HTTP 200`);
    expect(received).toHaveLength(1);
  });
});
