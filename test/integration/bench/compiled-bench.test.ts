import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const BUILD = join(REPO, '.bench-build');

interface CompiledBench {
  readonly benchScript: (relative: string) => string[];
  readonly REPO_ROOT: string;
}

interface CompiledChildren {
  readonly spawnBenchChild: <T>(script: string, arg: unknown, parse: (line: unknown) => T) => Promise<{ info: T; stop(): Promise<void> }>;
}

describe('npm run bench measures the compiled JavaScript, as npm start runs it', () => {
  it('builds the bench with tsc and runs its children from the build with plain node', { timeout: 180_000 }, async () => {
    await run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(REPO, 'tsconfig.bench.json')], { cwd: REPO });
    const script: CompiledBench = await import(join(BUILD, 'bench/bench-script.js'));
    expect(script.benchScript('./proxy-process.ts')).toEqual([join(BUILD, 'bench/proxy-process.js')]);
    expect(existsSync(join(script.REPO_ROOT, 'bench/java/CuratorBench.java'))).toBe(true);

    const children: CompiledChildren = await import(join(BUILD, 'bench/child-process.js'));
    const standIn = await children.spawnBenchChild('./stand-in-process.ts', { writeMs: 0, readMs: 0, bulkDocMs: 0 }, (line) => line as { port: number });
    try {
      const answer = await fetch(`http://127.0.0.1:${standIn.info.port}/`);
      expect(answer.status).toBe(200);
    } finally {
      await standIn.stop();
    }
  });

  it('runs its children from source under tsx when the bench itself runs from source', async () => {
    const { benchScript } = await import('../../../bench/bench-script.js');
    expect(benchScript('./proxy-process.ts')).toEqual(['--import', 'tsx', join(REPO, 'bench/proxy-process.ts')]);
  });
});
