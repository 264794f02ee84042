import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { spawnCli, waitForLine } from '../cli/run-cli-process.js';
import { startWriteStack, type WriteStack } from '../../support/write-stack.js';
import { listZnodes } from '../../support/zookeeper-ensemble.js';
import { exchange, waitUntil, type Outcome } from './fault-kit.js';

const SESSION_TIMEOUT_MS = 2_000;
const CRASH = { 'x-fault-phase': 'crash' };
const DOCS = ['c1', 'c2', 'c3'];
const BULK_DOCS = ['c4', 'c5'];

/** A separate proxy process (the CLI), killed with SIGKILL while it holds locks with writes in flight. */
describe('crashed proxy', () => {
  let stack: WriteStack | undefined;
  let child: ChildProcess | undefined;
  let workDir: string | undefined;
  afterEach(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    await stack?.close();
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  });

  it('kill -9 of a lock holder: the other proxy writes those documents within the session timeout, no znodes left', async () => {
    const zookeeper = inject('zookeeperConnect');
    stack = await startWriteStack({ zookeeper, proxies: 1, settings: { lock: { foregroundTimeoutMs: 15_000 } } });
    workDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-crash-'));
    const configFile = join(workDir, 'proxy.properties');
    await writeFile(
      configFile,
      [
        `zookeeper.servers=${zookeeper}`,
        `zookeeper.session.timeout=${SESSION_TIMEOUT_MS}`,
        `zookeeper.lock.root=${stack.lockRoot}`,
        `elasticsearch.hosts=${stack.standIn.url}`,
        'proxy.listen.port=0',
        'proxy.admin.port=0',
        `proxy.deadletter.dir=${join(workDir, 'dlq')}`,
        'proxy.log.level=info',
        'proxy.log.format=json',
      ].join('\n') + '\n',
    );
    child = spawnCli(['start', '--config', configFile, '--set', 'zookeeper.foregound.task.timeout=10000']);
    const crashingUrl = `http://${listenAddressOf(await waitForLine(child, (line) => line.includes('es-lock-proxy started')))}`;

    const gate = stack.standIn.gate((request) => request.headers['x-fault-phase'] === 'crash');
    const doomed: Promise<Outcome>[] = DOCS.map((id) => exchange(`${crashingUrl}/crash/_doc/${id}`, { method: 'PUT', body: '{"by":"crashed"}', headers: CRASH }));
    const bulkBody = BULK_DOCS.flatMap((id) => [JSON.stringify({ index: { _index: 'crash', _id: id } }), '{"by":"crashed"}']).join('\n') + '\n';
    doomed.push(exchange(`${crashingUrl}/_bulk`, { method: 'POST', body: bulkBody, headers: { ...CRASH, 'content-type': 'application/x-ndjson' } }));
    await gate.arrived(DOCS.length + 1);
    const proxy = stack.proxies[0];
    if (proxy === undefined) throw new Error('no in-process proxy');
    for (const id of [...DOCS, ...BULK_DOCS]) expect((await proxy.locks.inspect({ index: 'crash', id })).holder).not.toBeNull();

    const killedAt = performance.now();
    child.kill('SIGKILL');
    await once(child, 'exit');
    const survivorUrl = stack.urls[0] ?? '';
    const takeovers = await Promise.all(
      [...DOCS, ...BULK_DOCS].map(async (id) => {
        const outcome = await exchange(`${survivorUrl}/crash/_doc/${id}`, { method: 'PUT', body: '{"by":"survivor"}' });
        return { id, outcome, afterKillMs: performance.now() - killedAt };
      }),
    );
    gate.release();
    const crashedClients = await Promise.all(doomed);

    for (const { id, outcome, afterKillMs } of takeovers) {
      expect(outcome.kind === 'answered' && outcome.answer.status, id).toBe(201);
      expect(afterKillMs, id).toBeLessThan(SESSION_TIMEOUT_MS + 1_500);
    }
    expect(crashedClients.every((outcome) => outcome.kind === 'unanswered')).toBe(true);
    // kill -9 closes the crashed proxy's sockets, not its writes inside Elasticsearch: each is still
    // in flight when the survivor's write to its document arrives, and lands after it. Without
    // fencing (proxy.fencing=on) nothing stops that; the documents end with the stale content.
    const lockedKeys = [...DOCS, ...BULK_DOCS].map((id) => `crash/${id}`);
    expect(stack.standIn.overlaps.examples.map((example) => example.key).sort()).toEqual(lockedKeys);
    expect(stack.standIn.overlaps.count).toBe(lockedKeys.length);
    await Promise.all(lockedKeys.map((key) => stack?.standIn.waitForApplied((write) => write.key === key && write.status === 200)));
    for (const id of [...DOCS, ...BULK_DOCS]) {
      expect(stack.standIn.history('crash', id).map((write) => write.body), id).toEqual([{ by: 'survivor' }, { by: 'crashed' }]);
      expect(stack.standIn.document('crash', id)?.source, id).toEqual({ by: 'crashed' });
    }
    const arrivals = stack.standIn.requests.filter((request) => request.method === 'PUT' || request.url === '/_bulk');
    expect(arrivals).toHaveLength(DOCS.length + 1 + DOCS.length + BULK_DOCS.length);
    await waitUntil(async () => (await listZnodes(zookeeper, stack?.lockRoot ?? '/')).lockNodes.length === 0, 5_000, 'lock nodes gone');

    const slowest = Math.max(...takeovers.map((t) => t.afterKillMs));
    console.log(
      `crashed-proxy: kill -9 with ${DOCS.length + BULK_DOCS.length} locked documents in flight; survivor wrote all of them ` +
        `within ${Math.round(slowest)} ms (session ${SESSION_TIMEOUT_MS} ms), 0 lock znodes left; ` +
        `its ${lockedKeys.length} writes still inside the cluster landed after the survivor's (${stack.standIn.overlaps.count} overlaps, the unfenced limit)`,
    );
  });
});

/** `listen` of the CLI's JSON startup line. */
function listenAddressOf(line: string): string {
  const parsed: unknown = JSON.parse(line);
  if (typeof parsed === 'object' && parsed !== null && 'listen' in parsed && typeof parsed.listen === 'string') return parsed.listen;
  throw new Error(`startup line without a listen address: ${line}`);
}
