/**
 * One proxy instance in its own process for `npm run bench`. Argument: JSON
 * `{ zookeeper, lockRoot, upstream, deadLetterDir, lockService?, listenTls?, authVerify?, refusalThrottle? }` (`listenTls`:
 * `{ certFile, keyFile }`, HTTPS on the proxy port; `authVerify`: `on`/`off`, `proxy.auth.verify`
 * in front of a stand-in with security on, the proxy's own calls as `BENCH_PROXY_USER`; `refusalThrottle: "off"`:
 * `proxy.auth.refusal.*` off). Prints
 * `{"proxyPort","adminPort","statsPort"}` once its lock service is ready. `lockService:
 * "in-process"` runs the same proxy on the in-process lock engine, without ZooKeeper: the edge and
 * the write path alone, the reference that tells their cost from the ZooKeeper lock's.
 * Bench-only listener (not part of the product): `GET /stats` → lock engine counters, exact lock
 * wait/hold samples since the last call, CPU time, the event loop's delay since the last call if
 * that one was `?eventLoop=on` (sampled only from such a call to the next call).
 */
import { createServer } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import type { RefusalThrottleSettings } from '../src/auth/auth-settings.js';
import type { LockEngine } from '../src/lock/lock-engine.js';
import { MemoryLockEngine } from '../src/lock/memory/memory-lock-engine.js';
import { ZooKeeperLockEngine } from '../src/lock/zookeeper/zookeeper-lock-engine.js';
import { startProxyRuntime } from '../src/server/proxy-runtime.js';
import { testSettings } from '../test/support/test-settings.js';
import { waitForLockService } from '../test/support/write-stack.js';
import { objectField, stringField } from './child-process.js';
import { BENCH_PROXY_USER } from './bench-security.js';
import { LockTimingRecorder } from './lock-timings.js';

const config: unknown = JSON.parse(process.argv[2] ?? '{}');
const inProcess = objectField(config, 'lockService') === 'in-process';
const tlsFiles = objectField(config, 'listenTls');
const authVerify = objectField(config, 'authVerify');
/** `refusalThrottle: "off"`: every credential refusal answered at once, the connection kept (the cost of one refusal alone). */
function refusalThrottleOf(defaults: RefusalThrottleSettings): RefusalThrottleSettings {
  return objectField(config, 'refusalThrottle') === 'off' ? { ...defaults, delayMaxMs: 0, closeAfter: 0 } : defaults;
}
const listenTls = typeof tlsFiles === 'object' && tlsFiles !== null ? { certFile: stringField(tlsFiles, 'certFile'), keyFile: stringField(tlsFiles, 'keyFile'), caFile: null } : null;
// Long lock timeouts: a flood must queue, not turn into 429s that would flatter the latency.
const settings = testSettings({
  zookeeper: {
    servers: stringField(config, 'zookeeper'),
    lockRoot: stringField(config, 'lockRoot'),
    sessionTimeoutMs: 10_000,
  },
  lock: { foregroundTimeoutMs: 60_000, backgroundTimeoutMs: 60_000 },
  elasticsearch: { hosts: [stringField(config, 'upstream')], ...(authVerify === undefined ? {} : { auth: BENCH_PROXY_USER }) },
  proxy: { ...(authVerify === 'on' || authVerify === 'off' ? { auth: { ...testSettings().proxy.auth, verify: authVerify, refusalThrottle: refusalThrottleOf(testSettings().proxy.auth.refusalThrottle) } } : {}), deadLetterDir: stringField(config, 'deadLetterDir'), logLevel: 'error', slowLockMs: 60_000, fencing: objectField(config, 'fencing') === 'on' ? 'on' : 'off', lockService: inProcess ? 'in-process' : 'zookeeper', listenTls },
});
const logger = pino({ level: 'error' }, pino.destination(2));
const timing = new LockTimingRecorder();
const zookeeperEngine = inProcess ? null : new ZooKeeperLockEngine(settings.zookeeper, logger.child({ component: 'lock' }), { events: timing.events });
const engine: LockEngine = zookeeperEngine ?? new MemoryLockEngine({ events: timing.events });
const NO_ZOOKEEPER = { zkOps: { create: 0, delete: 0, get: 0, getChildren: 0, multi: 0, multiOps: 0, multiRefused: 0 } };
const engineStats = (): unknown => zookeeperEngine?.stats() ?? NO_ZOOKEEPER;
const runtime = await startProxyRuntime(settings, logger, { lockEngine: engine });
await waitForLockService(runtime);

// How late the event loop ran a 10 ms timer: every lock answer and watch event waits that long
// behind the other connections' work. Sampled only for the workloads that ask (its timer costs
// about 3 ms of CPU a second, which would show in the CPU-per-write figures of the others).
const LOOP_TIMER_MS = 10;
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_TIMER_MS });
let sampling = false;

/**
 * The event loop's delay since the previous call, if that one turned sampling on (else 0), and
 * sampling on from now when `on`, off otherwise. The histogram holds whole intervals: the timer's
 * own period is taken off.
 */
function takeLoopDelay(on: boolean): { readonly meanMs: number; readonly p99Ms: number } {
  const lateMs = (intervalNs: number): number => (sampling && loopDelay.count > 0 ? Math.max(0, intervalNs / 1e6 - LOOP_TIMER_MS) : 0);
  const delay = { meanMs: lateMs(loopDelay.mean), p99Ms: lateMs(loopDelay.percentile(99)) };
  loopDelay.reset();
  if (on !== sampling) {
    if (on) loopDelay.enable();
    else loopDelay.disable();
    sampling = on;
  }
  return delay;
}

const stats = createServer((req, res) => {
  const sampleLoop = new URL(req.url ?? '/', 'http://stats').searchParams.get('eventLoop') === 'on';
  const body = { engine: engineStats(), timings: timing.takeTimings(), cpu: process.cpuUsage(), rssBytes: process.memoryUsage().rss, eventLoopDelay: takeLoopDelay(sampleLoop) };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
});
stats.listen(0, '127.0.0.1');
await new Promise((resolve) => stats.once('listening', resolve));
const statsAddress = stats.address();
const statsPort = statsAddress !== null && typeof statsAddress === 'object' ? statsAddress.port : -1;

process.on('SIGTERM', () => {
  stats.close();
  // exit() (not a signal death) so that --cpu-prof writes its profile.
  void runtime.close().finally(() => process.exit(0));
});
console.log(JSON.stringify({ proxyPort: runtime.proxyAddress.port, adminPort: runtime.adminAddress.port, statsPort }));
