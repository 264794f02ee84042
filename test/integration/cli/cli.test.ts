import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { CliContext } from '../../../src/cli/cli-context.js';
import { runCli as runCliInProcess } from '../../../src/cli/run-cli.js';
import { completion, REPO_ROOT, runCli, spawnCli, waitForLine } from './run-cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'es-lock-proxy-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text, 'utf8');
  return file;
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

/** The CLI in this process with captured output: for paths that end before anything starts. */
async function runInProcess(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  let stdout = '';
  let stderr = '';
  const context: CliContext = {
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env ?? {},
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    signals: new EventEmitter(),
  };
  const code = await runCliInProcess(args, context);
  return { code, stdout, stderr };
}

describe.concurrent('es-lock-proxy as a process', () => {
  it('--help prints the usage and exits 0', async () => {
    const run = await runCli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: es-lock-proxy <command>/);
    expect(run.stdout).toMatch(/\n {2}start {2}/);
    expect(run.stderr).toBe('');
  });

  it('a foreground prefix that does not sort first: exit 2 and exactly one stderr line naming the key', async () => {
    const run = await runCli(['start', '--config', configFile('z.properties', 'zookeeper.foregound.lock.prefix=Z\n')]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'es-lock-proxy: zookeeper.foregound.lock.prefix=Z: expected a prefix that sorts before the background prefix "B"\n',
    );
  });

  it('an unreadable config file (a directory): one line naming the path', async () => {
    const directory = join(dir, 'conf.d');
    mkdirSync(directory, { recursive: true });
    const run = await runCli(['start', '--config', directory]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`es-lock-proxy: ${directory}: cannot read config file (EISDIR: is a directory)\n`);
  });

  it('start logs one startup line (addresses, upstream, ZooKeeper, redacted settings) and exits 0 on SIGTERM', async () => {
    const file = configFile(
      'run.properties',
      [
        'proxy.listen.port=0',
        'proxy.admin.port=0',
        'elasticsearch.hosts=http://elastic:hunter2@127.0.0.1:9',
        'zookeeper.auth=digest:proxy:zk-secret',
        'proxy.admin.token=admin-secret',
        `zookeeper.servers=${inject('zookeeperConnect')}`,
      ].join('\n'),
    );
    const child = spawnCli(['start', '--config', file]);
    const done = completion(child);
    try {
      const startup: unknown = JSON.parse(await waitForLine(child, (line) => line.includes('es-lock-proxy started')));
      expect(startup).toMatchObject({
        level: 30,
        msg: 'es-lock-proxy started',
        listen: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
        admin: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
        upstream: ['http://127.0.0.1:9/'],
        zookeeper: inject('zookeeperConnect'),
        settings: { 'zookeeper.auth': 'digest:proxy:[redacted]', 'proxy.admin.token': '[redacted]' },
      });
      child.kill('SIGTERM');
      const run = await done;
      expect(run, run.stdout).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toContain('es-lock-proxy stopped');
      for (const secret of ['hunter2', 'zk-secret', 'admin-secret']) expect(run.stdout).not.toContain(secret);
    } finally {
      child.kill('SIGKILL');
      await done;
    }
  });
});

describe('es-lock-proxy in process (same code path, no spawn)', () => {
  it('start --help prints the start usage and exits 0', async () => {
    const run = await runInProcess(['start', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: es-lock-proxy start [--config FILE] [--set key=value ...]');
  });

  it('--version prints the package version', async () => {
    const packageJson: unknown = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    const run = await runInProcess(['--version']);
    expect(run.code).toBe(0);
    expect(packageJson).toMatchObject({ version: run.stdout.trim() });
  });

  it('an unknown command prints the usage and exits 2', async () => {
    const run = await runInProcess(['stat']);
    expect(run.code).toBe(2);
    expect(lines(run.stderr)[0]).toBe('es-lock-proxy: unknown command "stat"');
    expect(run.stderr).toContain('Usage: es-lock-proxy <command>');
  });

  it('no command prints the usage and exits 2', async () => {
    const run = await runInProcess([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('missing command');
  });

  it('an environment value wins over the file and is named in the error', async () => {
    const file = configFile('port.properties', 'proxy.listen.port=9301\n');
    const run = await runInProcess(['start', '--config', file], { env: { ES_LOCK_PROXY_PROXY_LISTEN_PORT: 'abc' } });
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toEqual([
      'es-lock-proxy: ES_LOCK_PROXY_PROXY_LISTEN_PORT=abc: expected a TCP port from 0 to 65535 (0 picks a free port)',
    ]);
  });

  it('--set wins over the environment', async () => {
    const run = await runInProcess(['start', '--config', configFile('empty.properties', ''), '--set', 'proxy.log.level=loud'], {
      env: { LOG_LEVEL: 'debug' },
    });
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toEqual([
      'es-lock-proxy: proxy.log.level=loud: expected one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });

  it('a missing config file: one line naming the path and the reason', async () => {
    const missing = join(dir, 'missing.properties');
    const run = await runInProcess(['start', '--config', missing]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`es-lock-proxy: ${missing}: cannot read config file (ENOENT: no such file or directory)\n`);
  });

  it('the default config path is config/elasticsearch-details.properties under the working directory', async () => {
    const cwd = mkdtempSync(join(dir, 'cwd-'));
    const run = await runInProcess(['start'], { cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `es-lock-proxy: ${join(cwd, 'config/elasticsearch-details.properties')}: cannot read config file (ENOENT: no such file or directory)\n`,
    );
  });

  it('zookeeper.servers=none: one line naming the key that runs without ZooKeeper, exit 2', async () => {
    const run = await runInProcess(['start', '--config', configFile('none.properties', 'zookeeper.servers=none\n')]);
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toEqual([
      'es-lock-proxy: zookeeper.servers=none: expected comma-separated host:port pairs such as localhost:2181,localhost:2182 (optional /chroot suffix); to run without ZooKeeper set proxy.lock.service=in-process instead',
    ]);
  });

  it('an unknown option: one line, exit 2', async () => {
    const run = await runInProcess(['start', '--confg', 'x']);
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toEqual(["es-lock-proxy: start: Unknown option '--confg' (see es-lock-proxy start --help)"]);
  });

});
