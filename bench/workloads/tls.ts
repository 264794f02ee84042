import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROXY_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { createTestPki } from '../../test/support/test-certificates.js';
import { childCpuMs } from '../bench-environment.js';
import { numberField, spawnBenchChild, type BenchChild } from '../child-process.js';
import type { LoadSpec } from '../load.js';
import { measuredAlternating, round, target, type Workload } from '../workload-result.js';

const INDEX = 'bench-tls';
const CONNECTIONS = 32;
/** The goal: what HTTPS on the proxy port may add to the proxy's CPU per request. */
const MAX_ADDED_CPU_MS = 0.05;

interface ProxyPorts {
  readonly proxyPort: number;
  readonly statsPort: number;
}

/**
 * The cost of HTTPS on the proxy port: two fresh proxy processes, identical but for
 * `proxy.listen.tls.cert`/`.key`, serve the same searches over keep-alive connections, in
 * alternating slices; the difference of their CPU per request is what TLS adds (record
 * encryption and decryption; the handshakes happen once per connection, when each slice connects).
 * Searches pass through unlocked and the lock engine is in-process, so nothing else differs.
 */
export const tls: Workload = async (context) => {
  const { env, options } = context;
  for (let i = 0; i < 20; i++) {
    await fetch(`${env.directUrl}/${INDEX}/_doc/s${i}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: `doc ${i}` }) });
  }
  const pki = createTestPki();
  const certificate = pki.issueServer('bench-proxy');
  const deadLetterDir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-bench-tls-dlq-'));
  const children: BenchChild<ProxyPorts>[] = [];
  const start = async (listenTls: { certFile: string; keyFile: string } | null): Promise<ProxyPorts> => {
    const child = await spawnBenchChild(
      './proxy-process.ts',
      { zookeeper: env.zookeeper, lockRoot: '/es-lock-proxy-bench/tls', upstream: env.directUrl, deadLetterDir, lockService: 'in-process', listenTls },
      (line) => ({ proxyPort: numberField(line, 'proxyPort'), statsPort: numberField(line, 'statsPort') }),
      PROXY_NODE_FLAGS,
    );
    children.push(child);
    return child.info;
  };
  try {
    const plain = await start(null);
    const secure = await start({ certFile: certificate.certFile, keyFile: certificate.keyFile });
    const spec = (baseUrl: string): LoadSpec => ({
      baseUrl,
      connections: CONNECTIONS,
      durationS: options.durationS,
      method: 'POST',
      pathFor: () => `/${INDEX}/_search`,
      body: () => '{"query":{"match_all":{}},"size":10}',
    });
    const runs = await measuredAlternating(context, {
      plain: { spec: spec(`http://127.0.0.1:${plain.proxyPort}`), cpuMs: () => childCpuMs(plain.statsPort) },
      tls: { spec: spec(`https://127.0.0.1:${secure.proxyPort}`), cpuMs: () => childCpuMs(secure.statsPort) },
    });
    const added = runs.tls.cpuMsPerRequest - runs.plain.cpuMsPerRequest;
    return {
      workload: 'tls',
      summary: {
        plain_cpu_ms_per_request: round(runs.plain.cpuMsPerRequest, 4),
        tls_cpu_ms_per_request: round(runs.tls.cpuMsPerRequest, 4),
        tls_added_cpu_ms_per_request: round(added, 4),
        tls_cpu_ratio: round(runs.tls.cpuMsPerRequest / runs.plain.cpuMsPerRequest),
        plain_rps: round(runs.plain.load.rps, 1),
        tls_rps: round(runs.tls.load.rps, 1),
        plain_p50_ms: round(runs.plain.load.p50Ms),
        tls_p50_ms: round(runs.tls.load.p50Ms),
        plain_p99_ms: round(runs.plain.load.p99Ms),
        tls_p99_ms: round(runs.tls.load.p99Ms),
        tls_non2xx: runs.tls.load.non2xx + runs.tls.load.errors,
      },
      runs: { plain: runs.plain.load, tls: runs.tls.load },
      targets: [target(`TLS on the proxy port adds <= ${MAX_ADDED_CPU_MS} ms CPU per request (keep-alive)`, added, added <= MAX_ADDED_CPU_MS)],
      notes: [
        `POST /${INDEX}/_search over ${CONNECTIONS} keep-alive connections, to two fresh proxy processes (in-process locks), one plain and ` +
          'one with an EC P-256 certificate (TLS 1.3, as Node negotiates by default), in alternating slices; each slice opens its connections once',
      ],
    };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await rm(deadLetterDir, { recursive: true, force: true });
    pki.cleanup();
  }
};
