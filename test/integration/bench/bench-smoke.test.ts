import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';

const run = promisify(execFile);
const WORKLOADS = ['passthrough', 'write-uncontended', 'open-loop', 'write-hot', 'fg-under-bg', 'bulk', 'bulk-gzip', 'bulk-streams', 'lock', 'fencing', 'tls', 'auth-flood'];

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, name) : undefined;
}

/** Keeps `npm run bench` from rotting: every workload for about a second, numbers in the JSON, no race through the proxy. */
describe('npm run bench (smoke)', () => {
  it('runs every workload and writes a result with numbers for each', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'es-lock-proxy-bench-smoke-'));
    const out = join(dir, 'latest.json');
    try {
      const args = ['--import', 'tsx', 'bench/run-bench.ts', '--quick', '--warmup', '0', '--lock-ops', '20', '--no-curator', '--zk', inject('zookeeperConnect'), '--out', out];
      await run(process.execPath, args, { timeout: 150_000, maxBuffer: 16 * 1024 * 1024 });
      const report: unknown = JSON.parse(await readFile(out, 'utf8'));
      const workloads = field(report, 'workloads');
      for (const name of WORKLOADS) {
        const summary = field(field(workloads, name), 'summary');
        const values = Object.values(typeof summary === 'object' && summary !== null ? summary : {});
        expect(values.length, `${name} has numbers`).toBeGreaterThan(0);
        for (const value of values) expect(typeof value === 'number' || value === null, `${name}: ${String(value)}`).toBe(true);
      }
      const search = field(field(workloads, 'passthrough'), 'summary');
      expect(field(search, 'bare_cpu_ms_per_request')).toBeGreaterThan(0);
      expect(field(search, 'cpu_ratio_vs_bare')).toBeGreaterThan(0);
      const uncontended = field(field(workloads, 'write-uncontended'), 'summary');
      expect(field(uncontended, 'in_process_lock_rps'), 'the in-process-lock reference served writes').toBeGreaterThan(0);
      expect(field(uncontended, 'bare_zk_lock_rps'), 'the bare proxy with the least ZooKeeper lock served uncontended writes').toBeGreaterThan(0);
      expect(field(uncontended, 'moderate_proxy_rps'), 'the proxy served writes at 16 connections').toBeGreaterThan(0);
      expect(field(uncontended, 'moderate_bare_cpu_ms_per_request'), 'the bare proxy served writes at 16 connections').toBeGreaterThan(0);
      const openLoop = field(field(workloads, 'open-loop'), 'summary');
      expect(field(openLoop, 'zk_lock_create_under_proxy_load_p50_ms'), 'the floor ran beside the proxy\'s writes').toBeGreaterThan(0);
      expect(field(openLoop, 'zk_lock_create_under_bare_load_p50_ms'), 'the floor ran beside the bare proxy\'s writes').toBeGreaterThan(0);
      expect(field(openLoop, 'bare_zk_lock_write_cpu_ms_per_request'), 'the bare proxy with the least ZooKeeper lock served writes').toBeGreaterThan(0);
      const hot = field(field(workloads, 'write-hot'), 'summary');
      expect(field(hot, 'proxy_overlaps')).toBe(0);
      expect(field(hot, 'proxy_rps')).toBeGreaterThan(0);
      expect(field(hot, 'zk_handover_floor_p50_ms'), 'the raw sessions handed privateLock over').toBeGreaterThan(0);
      expect(field(hot, 'zk_handover_two_processes_mean_ms'), 'two processes handed privateLock over').toBeGreaterThan(0);
      expect(field(hot, 'two_proxies_grants_per_zookeeper_grant'), 'the first proxy took grants from ZooKeeper with two proxies').toBeGreaterThanOrEqual(1);
      expect(field(field(field(workloads, 'lock'), 'summary'), 'ours_hot_violations')).toBe(0);
      const streams = field(field(workloads, 'bulk-streams'), 'summary');
      expect(field(streams, 'zk_floor_docs_per_s'), 'the ZooKeeper floor ran its streams').toBeGreaterThan(0);
      expect(field(streams, 'proxy_docs_per_s'), 'bulks with ids went through the proxy').toBeGreaterThan(0);
      expect(field(streams, 'overlaps')).toBe(0);
      expect(field(streams, 'proxy_non2xx')).toBe(0);
      const tls = field(field(workloads, 'tls'), 'summary');
      expect(field(tls, 'tls_rps'), 'the HTTPS proxy served searches').toBeGreaterThan(0);
      expect(field(tls, 'tls_non2xx')).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
