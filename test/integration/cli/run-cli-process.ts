import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = fileURLToPath(new URL('../../../src/cli/main.ts', import.meta.url));
/** Absolute, so the CLI can run with any working directory. */
const TSX = import.meta.resolve('tsx');

export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment of this process without anything that would configure the proxy. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('ES_LOCK_PROXY_') && name !== 'LOG_LEVEL'),
  );
  return { ...env, ...extra };
}

export interface SpawnOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** More `node` options before the script, e.g. `['--import', hooks]`. */
  readonly nodeArgs?: readonly string[];
}

export function spawnCli(args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, ['--import', TSX, ...(options.nodeArgs ?? []), MAIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env ?? cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Collects a child's output until it exits. */
export function completion(child: ChildProcess): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export function runCli(args: readonly string[], options: SpawnOptions = {}): Promise<CliRun> {
  return completion(spawnCli(args, options));
}

/** Resolves with the first stdout line that satisfies `match` (the child keeps running). */
export function waitForLine(child: ChildProcess, match: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      const found = lines.find(match);
      if (found !== undefined) {
        child.stdout?.off('data', onData);
        child.off('exit', onExit);
        resolve(found);
      }
    };
    const onExit = (code: number | null): void => reject(new Error(`CLI exited (${code}) before printing the expected line`));
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}
