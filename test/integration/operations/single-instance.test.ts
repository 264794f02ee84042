import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { IN_PROCESS_WARNING } from '../../../src/lock/open-lock-engine.js';
import { startEsStandIn, type EsStandIn } from '../../support/es-stand-in.js';
import { REFUSED_MARKER } from '../../support/refuse-zookeeper.js';
import { cleanEnv, completion, spawnCli, waitForLine, type CliRun } from '../cli/run-cli-process.js';
import { ndjson, send } from '../write/write-client.js';

const REFUSE_ZOOKEEPER = ['--import', fileURLToPath(new URL('../../support/refuse-zookeeper.ts', import.meta.url))];

/**
 * The README's quick start for a user with only an Elasticsearch cluster: one command, the
 * shipped configuration file, `proxy.lock.service=in-process`. Run with a loader hook that fails
 * any attempt to resolve the `zookeeper` binding, so starting and serving prove it is never loaded.
 */
describe('single instance without ZooKeeper (proxy.lock.service=in-process)', () => {
  let standIn: EsStandIn | undefined;
  let child: ChildProcess | undefined;
  let done: Promise<CliRun> | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    child?.kill('SIGKILL');
    await done;
    await standIn?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    child = undefined;
    done = undefined;
    standIn = undefined;
    dir = undefined;
  });

  async function quickStart(lockService: string): Promise<void> {
    standIn = await startEsStandIn({ writeLatencyMs: 3 });
    dir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-single-'));
    // The README command, plus free ports and a scratch dead-letter directory for the test run.
    const args = ['start', '--set', `proxy.lock.service=${lockService}`, '--set', `elasticsearch.hosts=${standIn.url}`];
    const testOnly = ['--set', 'proxy.listen.port=0', '--set', 'proxy.admin.port=0', '--set', `proxy.deadletter.dir=${dir}`];
    child = spawnCli([...args, ...testOnly], { env: cleanEnv(), nodeArgs: REFUSE_ZOOKEEPER });
    done = completion(child);
  }

  it('starts with one command, warns that locks hold in this process only, serializes writes, inspects locks, never loads the binding', async () => {
    await quickStart('in-process');
    const lines: Record<string, unknown>[] = [];
    const startedLine = await waitForLine(child!, (line) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
      return line.includes('es-lock-proxy started');
    });
    const started = JSON.parse(startedLine) as { listen: string; admin: string; lockService: string; zookeeper: unknown };
    expect(started).toMatchObject({ lockService: 'in-process', zookeeper: null });
    expect(lines.find((line) => line.msg === IN_PROCESS_WARNING)).toMatchObject({ level: 40 });
    const url = `http://${started.listen}`;
    const adminUrl = `http://${started.admin}`;
    expect((await fetch(`${adminUrl}/readyz`)).status).toBe(200);

    const gate = standIn!.gateDocument('products', 'hot');
    const holder = send(url, 'PUT', '/products/_doc/hot', { writer: 'holder' });
    await gate.arrived(1);
    const inspection = (await (await fetch(`${adminUrl}/locks/products/hot`)).json()) as { holder: { priority: string } | null };
    expect(inspection.holder).toMatchObject({ priority: 'foreground' });
    const writes = Array.from({ length: 40 }, (_, n) =>
      n % 4 === 0
        ? send(url, 'POST', '/_bulk', ndjson([{ index: { _index: 'products', _id: 'hot' } }, { n }, { index: { _index: 'products', _id: 'warm' } }, { n }]), {
            'content-type': 'application/x-ndjson',
          })
        : send(url, 'PUT', `/products/_doc/${n % 2 === 0 ? 'hot' : 'warm'}`, { n }, { 'X-Lock-Type': n % 3 === 0 ? 'background' : 'foreground' }),
    );
    gate.release();
    const statuses = (await Promise.all([holder, ...writes])).map((answer) => answer.status);
    expect(statuses.filter((status) => status >= 300)).toEqual([]);
    expect(standIn!.overlaps.count).toBe(0);
    expect(standIn!.maxConcurrentPerDocument).toBe(1);

    child!.kill('SIGTERM');
    const run = await done!;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain(REFUSED_MARKER);
  });

  it('the hook does bite: with ZooKeeper locks the same command fails to start on the refused binding', async () => {
    await quickStart('zookeeper');
    const run = await done!;
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(REFUSED_MARKER);
  });
});
