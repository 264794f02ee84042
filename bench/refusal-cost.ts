/**
 * The proxy's CPU per refused write: wrong-password writes through a proxy checking credentials
 * (`proxy.auth.verify=on`, the in-process lock service: a refusal never reaches a lock) in front of
 * the secured stand-in, measured with the proxy process's own CPU time (/proc/<pid>/stat) over the
 * run. Two shapes in one run: keep-alive connections, and a new connection per write (what a
 * flood that reconnects still costs). Refusal throttling is off unless `--throttle on`, so the
 * figure is the cost of one answered refusal.
 *
 *   npm run build:bench && node .bench-build/bench/refusal-cost.js [--writes 5000] [--connections 16] [--throttle on] [--shape keep-alive|new] [--cpu-prof-dir DIR]
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { basicAuthorization } from './bench-security.js';
import { runScript } from './bench-script.js';
import { numberField, spawnBenchChild } from './child-process.js';
import { exchangeStatus } from './http-exchange.js';

const CLOCK_TICKS_PER_SECOND = 100;
const WRONG_PASSWORD = { authorization: basicAuthorization('writer', 'wrong'), 'content-type': 'application/json', 'X-Lock-Type': 'foreground' };
const BODY = '{"field":"value","n":1}';

interface Shape {
  readonly name: string;
  readonly keepAlive: boolean;
}

const SHAPES: readonly Shape[] = [
  { name: 'keep-alive', keepAlive: true },
  { name: 'new connection per write', keepAlive: false },
];

/** utime + stime of `pid` in ms, from /proc (fields 14 and 15 of its stat line). */
async function processCpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** `writes` refused writes spread over `connections` closed-loop workers; the statuses seen. */
async function refusedWrites(baseUrl: string, writes: number, connections: number, keepAlive: boolean): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive, maxSockets: connections });
  const statuses = new Map<number, number>();
  let next = 0;
  const headers = keepAlive ? WRONG_PASSWORD : { ...WRONG_PASSWORD, connection: 'close' };
  const worker = async (): Promise<void> => {
    while (next < writes) {
      const n = next++;
      const status = await exchangeStatus(agent, new URL(`/bench-auth/_doc/hot-${n % 8}`, baseUrl), 'PUT', headers, BODY);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
  return statuses;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { writes: { type: 'string', default: '5000' }, connections: { type: 'string', default: '16' }, throttle: { type: 'string', default: 'off' }, 'cpu-prof-dir': { type: 'string' }, shape: { type: 'string' } } });
  const writes = Number(values.writes);
  const connections = Number(values.connections);
  const deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-refusal-cost-'));
  const standIn = await spawnBenchChild('./stand-in-process.ts', { writeMs: 0, readMs: 0, bulkDocMs: 0, security: true }, (line) => ({ port: numberField(line, 'port') }));
  const proxy = await spawnBenchChild(
    './proxy-process.ts',
    { zookeeper: '127.0.0.1:1', lockService: 'in-process', lockRoot: '/refusal-cost', upstream: `http://127.0.0.1:${standIn.info.port}`, deadLetterDir, authVerify: 'on', refusalThrottle: values.throttle },
    (line) => ({ proxyPort: numberField(line, 'proxyPort') }),
    values['cpu-prof-dir'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof-dir']}`],
  );
  try {
    const baseUrl = `http://127.0.0.1:${proxy.info.proxyPort}`;
    await refusedWrites(baseUrl, 200, connections, true);
    const results: Record<string, unknown>[] = [];
    for (const shape of SHAPES.filter((candidate) => values.shape === undefined || candidate.name.startsWith(values.shape))) {
      const before = await processCpuMs(proxy.pid);
      const started = performance.now();
      const statuses = await refusedWrites(baseUrl, writes, connections, shape.keepAlive);
      const wallMs = performance.now() - started;
      const cpuMs = (await processCpuMs(proxy.pid)) - before;
      results.push({ shape: shape.name, writes, connections, statuses: Object.fromEntries(statuses), proxyCpuMs: cpuMs, cpuMsPerRefusal: Number((cpuMs / writes).toFixed(4)), wallMs: Math.round(wallMs) });
    }
    console.log(JSON.stringify({ throttle: values.throttle, results }, null, 2));
  } finally {
    await proxy.stop();
    await standIn.stop();
    await rm(deadLetterDir, { recursive: true, force: true });
  }
}

runScript(main);
