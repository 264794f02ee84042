import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { benchScript } from './bench-script.js';

/** A bench component in its own process: it prints one JSON line (its ports) once it serves. */
export interface BenchChild<T> {
  readonly info: T;
  readonly pid: number;
  stop(): Promise<void>;
}

const STDERR_TAIL = 8_000;

/**
 * Spawns `<script> <arg>` (a path relative to bench/, run the way bench-script.ts says) and
 * resolves with the first stdout line parsed by `parse`. Separate processes keep the proxy, the
 * stand-in and the load generator from sharing one event loop, which would make every ratio
 * meaningless.
 */
export async function spawnBenchChild<T>(
  script: string,
  arg: unknown,
  parse: (line: unknown) => T,
  extraNodeArgs: readonly string[] = [],
): Promise<BenchChild<T>> {
  const child = spawn(process.execPath, [...extraNodeArgs, ...benchScript(script), JSON.stringify(arg)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL)));
  const firstLine = await firstStdoutLine(child, () => stderr);
  const info = parse(JSON.parse(firstLine));
  child.stdout?.resume();
  return { info, pid: child.pid ?? -1, stop: () => stopChild(child) };
}

function firstStdoutLine(child: ChildProcess, stderr: () => string): Promise<string> {
  const stdout = child.stdout;
  if (stdout === null) return Promise.reject(new Error('child has no stdout'));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: stdout });
    const onExit = (code: number | null): void => reject(new Error(`bench child exited (${code}) before it was ready:\n${stderr()}`));
    child.once('exit', onExit);
    lines.once('line', (line) => {
      child.off('exit', onExit);
      lines.close();
      resolve(line);
    });
  });
}

/** SIGTERM lets the proxy close its ZooKeeper session (and write a CPU profile when asked). */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export function objectField(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, name) : undefined;
}

export function stringField(value: unknown, name: string): string {
  const field = objectField(value, name);
  if (typeof field !== 'string') throw new Error(`expected a string in field ${name} of ${JSON.stringify(value)}`);
  return field;
}

export function numberField(value: unknown, name: string): number {
  const field = objectField(value, name);
  if (typeof field !== 'number' || !Number.isFinite(field)) throw new Error(`expected a number in field ${name} of ${JSON.stringify(value)}`);
  return field;
}
