import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, spawnCli, waitForLine } from '../cli/run-cli-process.js';

export interface ProxyProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly adminUrl: string;
  readonly configFile: string;
  /** Every stdout line so far (pino JSON). */
  readonly lines: string[];
  /** Resolves with the first (past or future) log line whose `msg` matches. */
  waitForLog(match: (entry: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
  cleanup(): Promise<void>;
}

/** The real CLI (`es-lock-proxy start --config FILE`) in its own process, on free ports. */
export async function startProxyProcess(properties: Record<string, string>): Promise<ProxyProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-proc-'));
  const configFile = join(dir, 'elasticsearch-details.properties');
  await writeFile(configFile, propertiesText({ 'proxy.listen.port': '0', 'proxy.admin.port': '0', 'proxy.deadletter.dir': join(dir, 'dlq'), ...properties }));
  const child = spawnCli(['start', '--config', configFile], { env: cleanEnv() });
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const complete = buffered.split('\n');
    buffered = complete.pop() ?? '';
    lines.push(...complete.filter((line) => line.trim() !== ''));
    for (const listener of listeners) listener();
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = JSON.parse(await waitForLine(child, (line) => line.includes('es-lock-proxy started')).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${stderr}`);
  })) as { listen: string; admin: string };
  const waitForLog = (match: (entry: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      const check = (): boolean => {
        for (const line of lines) {
          const entry = JSON.parse(line) as Record<string, unknown>;
          if (match(entry)) {
            resolve(entry);
            return true;
          }
        }
        return false;
      };
      if (check()) return;
      const listener = (): void => {
        if (check()) listeners.delete(listener);
      };
      listeners.add(listener);
    });
  return {
    child,
    url: `http://${started.listen}`,
    adminUrl: `http://${started.admin}`,
    configFile,
    lines,
    waitForLog,
    exited,
    cleanup: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function propertiesText(properties: Record<string, string>): string {
  return Object.entries(properties).map(([key, value]) => `${key}=${value}`).join('\n') + '\n';
}
