import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { type EsStandIn, startEsStandIn } from '../../support/es-stand-in.js';
import { REPO_ROOT, cleanEnv, completion, waitForLine } from '../cli/run-cli-process.js';

/**
 * es-lock-proxy as a user gets it: `npm pack`ed, installed into an empty project with npm, run
 * through `npx`. First without install scripts (the addon is not built: `start` must refuse in
 * one line naming the fix, not crash), then with both install scripts approved and run exactly
 * as the README's Install section says. Needs the npm registry (for the dependencies).
 */
const exec = promisify(execFile);
const INSTALL_MS = 240_000;

let work: string;
let project: string;
let tarball: string;

async function npm(args: readonly string[], cwd: string): Promise<string> {
  const { stdout } = await exec('npm', [...args], { cwd, env: cleanEnv(), maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

function npx(args: readonly string[]): ChildProcess {
  return spawn('npx', ['--no-install', 'es-lock-proxy', ...args], { cwd: project, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The installed command itself (npx may add npm's own warnings to stderr, and relays signals). */
function command(args: readonly string[]): ChildProcess {
  return spawn(join(project, 'node_modules', '.bin', 'es-lock-proxy'), [...args], { cwd: project, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'es-lock-proxy-install-'));
  await npm(['pack', '--pack-destination', work], REPO_ROOT);
  const [file] = (await readdir(work)).filter((name) => name.endsWith('.tgz'));
  if (file === undefined) throw new Error('npm pack wrote no tarball');
  tarball = join(work, file);
  project = join(work, 'project');
  await mkdir(project);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'uses-es-lock-proxy', version: '1.0.0', private: true }));
  // `start` reads config/elasticsearch-details.properties of its working directory: defaults here, the rest by --set.
  await mkdir(join(project, 'config'));
  await writeFile(join(project, 'config', 'elasticsearch-details.properties'), '');
  // README, Install: install without running anything yet ...
  await npm(['install', '--ignore-scripts', '--no-audit', '--no-fund', tarball], project);
}, INSTALL_MS);

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe('the packed package installed into an empty project', () => {
  it('without its install scripts: --help works, start refuses in one line naming the fix (exit 2)', async () => {
    const help = await completion(npx(['--help']));
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: es-lock-proxy <command>/);

    const start = await completion(command(['start', '--set', `zookeeper.servers=${inject('zookeeperConnect')}`]));
    expect(start.code).toBe(2);
    expect(start.stdout).toBe('');
    expect(start.stderr.split('\n').filter((line) => line !== '')).toEqual([
      expect.stringMatching(/^es-lock-proxy: the ZooKeeper addon is not built \(.*\): run `npm install-scripts approve zookeeper es-lock-proxy && npm rebuild zookeeper es-lock-proxy` where es-lock-proxy is installed/),
    ]);
  });

  describe('with both install scripts approved and run as the README says', () => {
    let standIn: EsStandIn | undefined;

    beforeAll(async () => {
      // ... then approve both install scripts and run them: the C client, then our addon.
      await npm(['install-scripts', 'approve', 'zookeeper', 'es-lock-proxy'], project);
      await npm(['rebuild', 'zookeeper', 'es-lock-proxy'], project);
    }, INSTALL_MS);

    afterAll(async () => {
      await standIn?.stop();
    });

    it('records the approvals: nothing is left unreviewed', async () => {
      const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
      expect(Object.keys(manifest.allowScripts ?? {})).toEqual(
        expect.arrayContaining([expect.stringMatching(/^zookeeper/), expect.stringContaining('es-lock-proxy')]),
      );
      expect(await npm(['install-scripts', 'ls'], project)).not.toMatch(/zookeeper|es-lock-proxy/);
    });

    it('--help exits 0; a bad value is one line naming the key, exit 2', async () => {
      const help = await completion(npx(['--help']));
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage: es-lock-proxy <command>/);

      const bad = await completion(command(['start', '--set', 'zookeeper.session.timeout=soon']));
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe('es-lock-proxy: zookeeper.session.timeout=soon: expected an integer from 1 to 2147483647\n');
    });

    it('starts against a real ZooKeeper with the installed addon: /readyz 200, SIGTERM exits 0', async () => {
      standIn = await startEsStandIn();
      const child = command([
        'start',
        '--set', 'proxy.listen.port=0',
        '--set', 'proxy.admin.port=0',
        '--set', `proxy.deadletter.dir=${join(work, 'dlq')}`,
        '--set', `elasticsearch.hosts=${standIn.url}`,
        '--set', `zookeeper.servers=${inject('zookeeperConnect')}`,
        '--set', `zookeeper.lock.root=/packed-install-${Date.now().toString(36)}`,
      ]);
      const exited = completion(child);
      const started = JSON.parse(await waitForLine(child, (line) => line.includes('es-lock-proxy started'))) as { admin: string };

      await vi.waitFor(async () => expect((await fetch(`http://${started.admin}/readyz`)).status).toBe(200), { timeout: 20_000, interval: 100 });
      child.kill('SIGTERM');
      const run = await exited;
      expect(run.code).toBe(0);
      expect(run.stderr).toBe('');
    });
  });
});
