import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthenticationCache } from '../../src/auth/authentication-cache.js';
import { PrincipalShare } from '../../src/auth/principal-share.js';
import type { SecurityDetection } from '../../src/auth/security-detection.js';
import { createWriteAdmission } from '../../src/auth/write-admission.js';
import { PrivilegeCheck } from '../../src/auth/write-privileges.js';
import { RefusalThrottle } from '../../src/auth/refusal-throttle.js';
import type { UpstreamForwarder } from '../../src/elasticsearch/upstream-forwarder.js';
import type { WriteRequest } from '../../src/write/write-request.js';
import { testSettings } from '../../test/support/test-settings.js';
import { basicAuthorization } from '../bench-security.js';
import { numberField, spawnBenchChild, type BenchChild } from '../child-process.js';
import type { LoadResult, LoadSpec } from '../load.js';
import { measured, measuredTogether, randomBelow, round, target, type Workload, type WorkloadContext } from '../workload-result.js';

const INDEX = 'bench-auth';
const DOCUMENTS = 8;
const WRITER_CONNECTIONS = 8;
const FLOOD_CONNECTIONS = 32;
const WRITER = { authorization: basicAuthorization('writer', 'writer-secret'), 'X-Lock-Type': 'background' };
const PROXY_USER = { authorization: basicAuthorization('proxy', 'proxy-secret') };
/** The flood: foreground writes half without credentials, half with a wrong password. */
const FLOOD_HEADERS: readonly Record<string, string>[] = [{ 'X-Lock-Type': 'foreground' }, { 'X-Lock-Type': 'foreground', authorization: basicAuthorization('writer', 'wrong') }];
const CACHED_CHECKS = 200_000;

function writes(baseUrl: string, durationS: number, connections: number, headers: Record<string, string>): LoadSpec {
  return {
    baseUrl,
    connections,
    durationS,
    method: 'PUT',
    pathFor: () => `/${INDEX}/_doc/hot-${randomBelow(DOCUMENTS)}`,
    body: () => '{"field":"value","n":1}',
    headers,
  };
}

async function refusedWrites(standInUrl: string): Promise<number> {
  const response = await fetch(`${standInUrl}/_bench/overlaps`, { headers: PROXY_USER });
  return numberField(await response.json(), 'refusedWrites');
}

interface FloodRuns {
  readonly alone: LoadResult;
  readonly writers: LoadResult;
  readonly flood: readonly LoadResult[];
  /** Writes the cluster refused for their credentials during the flood run (they reached it). */
  readonly reachedCluster: number;
}

async function floodRuns(context: WorkloadContext, baseUrl: string, standInUrl: string): Promise<FloodRuns> {
  const { durationS } = context.options;
  const alone = await measured(context, writes(baseUrl, durationS, WRITER_CONNECTIONS, WRITER));
  let before = 0;
  const specs = [
    writes(baseUrl, durationS, WRITER_CONNECTIONS, WRITER),
    ...FLOOD_HEADERS.map((headers) => writes(baseUrl, durationS, FLOOD_CONNECTIONS / FLOOD_HEADERS.length, headers)),
  ];
  const [writers, ...flood] = await measuredTogether(context, specs, async () => (before = await refusedWrites(standInUrl)));
  if (writers === undefined) throw new Error('auth-flood: the writers did not run');
  return { alone, writers, flood, reachedCluster: (await refusedWrites(standInUrl)) - before };
}

/** The checked proxy's refusal throttle so far (`es_lock_proxy_auth_refusals_throttled_total`), by action. */
async function throttledRefusals(adminPort: number): Promise<{ delayed: number; closed: number }> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const count = (action: string): number => {
    const line = text.split('\n').find((row) => row.startsWith(`es_lock_proxy_auth_refusals_throttled_total{action="${action}"}`));
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };
  return { delayed: count('delayed'), closed: count('closed') };
}

/**
 * CPU of one cached authentication: the admission of a write whose credentials were checked
 * before (keyed hash, cache look-up, priority, share), measured in this process over many calls.
 */
async function cpuPerCachedAuthenticationMs(): Promise<number> {
  const answer = Buffer.from('{"username":"writer","roles":["superuser"],"authentication_type":"realm"}');
  const forwarder = {
    exchange: async () => ({ status: 200, headers: {}, rawHeaders: [], body: answer, upstreamHost: 'bench' }),
  } as unknown as UpstreamForwarder;
  const base = testSettings();
  const settings = { ...base, proxy: { ...base.proxy, auth: { ...base.proxy.auth, verify: 'on' as const } } };
  const admission = createWriteAdmission({
    settings: () => settings,
    verdicts: new AuthenticationCache({ ask: async () => ({ kind: 'authenticated', principal: { username: 'writer', roles: [], apiKeyName: null, apiKeyId: null, authenticationType: 'realm' } }), size: 10_000, ttlMs: () => 600_000, refusalTtlMs: () => 1000 }),
    security: { state: 'on' } as unknown as SecurityDetection,
    share: new PrincipalShare(),
    privileges: new PrivilegeCheck(forwarder, 10, () => 0),
    throttle: new RefusalThrottle(() => settings.proxy.auth.refusalThrottle, { throttled: () => undefined }),
    events: { credentialChecked: () => undefined, foregroundDenied: () => undefined, shareExceeded: () => undefined },
  });
  const request = {
    req: { headers: { authorization: WRITER.authorization, 'x-lock-type': 'background' }, url: '/bench-auth/_doc/1' },
    route: { kind: 'single', op: 'index', index: INDEX, id: '1', typed: false },
    requestId: 'bench',
  } as unknown as WriteRequest;
  const first = await admission(request);
  if (first.admitted) first.release();
  const started = process.cpuUsage();
  for (let n = 0; n < CACHED_CHECKS; n++) {
    const admitted = await admission(request);
    if (admitted.admitted) admitted.release();
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000 / CACHED_CHECKS;
}

interface SecuredSetup {
  readonly standIn: BenchChild<{ port: number }>;
  readonly checked: BenchChild<{ proxyPort: number; adminPort: number }>;
  readonly bare: BenchChild<{ proxyPort: number; adminPort: number }>;
  close(): Promise<void>;
}

/** Its own secured stand-in, a proxy checking credentials, and the same proxy without the check (the bare reference). */
async function securedSetup(context: WorkloadContext): Promise<SecuredSetup> {
  const { options, env } = context;
  const started: BenchChild<unknown>[] = [];
  const deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-bench-auth-'));
  const close = async (): Promise<void> => {
    for (const child of started.reverse()) await child.stop();
    await rm(deadLetterDir, { recursive: true, force: true });
  };
  try {
    const standIn = await spawnBenchChild('./stand-in-process.ts', { writeMs: options.writeMs, readMs: options.readMs, bulkDocMs: 0, security: true }, (line) => ({ port: numberField(line, 'port') }));
    started.push(standIn);
    const proxy = async (authVerify: 'on' | 'off'): Promise<BenchChild<{ proxyPort: number; adminPort: number }>> => {
      const child = await spawnBenchChild(
        './proxy-process.ts',
        { zookeeper: env.zookeeper, lockRoot: `/es-lock-proxy-bench/auth-${authVerify}-${Date.now().toString(36)}`, upstream: `http://127.0.0.1:${standIn.info.port}`, deadLetterDir, authVerify },
        (line) => ({ proxyPort: numberField(line, 'proxyPort'), adminPort: numberField(line, 'adminPort') }),
      );
      started.push(child);
      return child;
    };
    return { standIn, checked: await proxy('on'), bare: await proxy('off'), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Authenticated writers of a few hot documents alone, then under a flood of unauthenticated
 * foreground writes from more connections: through the proxy checking credentials
 * (`proxy.auth.verify=on`), and the same runs through the same proxy without the check as the
 * reference, against one stand-in with security on.
 */
export const authFlood: Workload = async (context) => {
  const setup = await securedSetup(context);
  try {
    const standInUrl = `http://127.0.0.1:${setup.standIn.info.port}`;
    const throttledBefore = await throttledRefusals(setup.checked.info.adminPort);
    const checked = await floodRuns(context, `http://127.0.0.1:${setup.checked.info.proxyPort}`, standInUrl);
    const throttledAfter = await throttledRefusals(setup.checked.info.adminPort);
    const bare = await floodRuns(context, `http://127.0.0.1:${setup.bare.info.proxyPort}`, standInUrl);
    const cpuMs = await cpuPerCachedAuthenticationMs();
    const checkedRatio = checked.writers.rps / Math.max(checked.alone.rps, 1e-9);
    const bareRatio = bare.writers.rps / Math.max(bare.alone.rps, 1e-9);
    const floodOf = (runs: FloodRuns): number => runs.flood.reduce((sum, run) => sum + run.requests, 0);
    const floodErrorsOf = (runs: FloodRuns): number => runs.flood.reduce((sum, run) => sum + run.errors, 0);
    return {
      workload: 'auth-flood',
      summary: {
        writers_rps_alone: round(checked.alone.rps, 1),
        writers_rps_flood: round(checked.writers.rps, 1),
        writers_ratio: round(checkedRatio),
        writers_p99_ms_flood: round(checked.writers.p99Ms),
        flood_answered: floodOf(checked),
        flood_answered_rps: round(floodOf(checked) / Math.max(context.options.durationS, 1e-9), 1),
        flood_errors: floodErrorsOf(checked),
        flood_throttled_delayed: throttledAfter.delayed - throttledBefore.delayed,
        flood_throttled_closed: throttledAfter.closed - throttledBefore.closed,
        flood_reached_cluster: checked.reachedCluster,
        bare_writers_rps_alone: round(bare.alone.rps, 1),
        bare_writers_rps_flood: round(bare.writers.rps, 1),
        bare_writers_ratio: round(bareRatio),
        bare_flood_answered: floodOf(bare),
        bare_flood_answered_rps: round(floodOf(bare) / Math.max(context.options.durationS, 1e-9), 1),
        bare_flood_errors: floodErrorsOf(bare),
        bare_flood_reached_cluster: bare.reachedCluster,
        writers_non2xx: checked.alone.non2xx + checked.writers.non2xx + checked.alone.errors + checked.writers.errors,
        cpu_ms_per_cached_authentication: round(cpuMs, 5),
      },
      runs: { alone: checked.alone, writers: checked.writers, bare_alone: bare.alone, bare_writers: bare.writers },
      targets: [
        target('authenticated writers under the flood >= 0.8x alone', checkedRatio, checkedRatio >= 0.8),
        target('... and at least the bare proxy\'s ratio', checkedRatio - bareRatio, checkedRatio >= bareRatio),
        target('unauthenticated writes reaching the cluster = 0', checked.reachedCluster, checked.reachedCluster === 0),
        target('CPU per cached authentication <= 0.02 ms', cpuMs, cpuMs <= 0.02),
      ],
      notes: [
        `writers: ${WRITER_CONNECTIONS} connections, Basic credentials, background, ${DOCUMENTS} hot docs; flood: ${FLOOD_CONNECTIONS} connections, foreground, half without credentials, half with a wrong password, same docs`,
        'one stand-in with security on; the proxy with proxy.auth.verify=on, and the same proxy with it off as the reference (bare), in the same run',
        'flood_reached_cluster: writes the stand-in refused for their credentials during the flood run',
        'flood_answered: flood requests answered (401s) in the measured run, the same closed-loop flood for both proxies; with the checks on the proxy throttles repeated refusals per connection (proxy.auth.refusal.*, defaults), so its flood is answered at the pace the throttle sets: flood_throttled_* count its delayed answers and closed connections (warm-up included) (flood_errors: connections the flood saw closed)',
        `CPU per cached authentication: the admission of a write with checked credentials, ${CACHED_CHECKS} calls in the bench process`,
      ],
    };
  } finally {
    await setup.close();
  }
};
