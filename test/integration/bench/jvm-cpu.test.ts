import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jvmCpu, jvmCpuSince } from '../../../bench/jvm-cpu.js';
import { startZooKeeper, type ZooKeeperCluster } from '../../support/zookeeper-server.js';

/** The bench's reading of the ZooKeeper server's CPU, and of its JIT threads' share, from /proc. */
describe.runIf(existsSync('/proc/self/task'))('the ZooKeeper JVM CPU reading', () => {
  let zk: ZooKeeperCluster;
  beforeAll(async () => {
    zk = await startZooKeeper(1);
  });
  afterAll(async () => {
    await zk.stop();
  });

  it('reads a running JVM: its JIT compiler threads are a part of its CPU, and the readings only grow', async () => {
    const pid = zk.nodes[0]?.pid();
    const first = await jvmCpu(pid);
    expect(first).not.toBeNull();
    // Starting ZooKeeper compiles its startup path: the compiler threads were found by name.
    expect(first!.compilerMs).toBeGreaterThan(0);
    expect(first!.totalMs).toBeGreaterThan(first!.compilerMs);
    const later = jvmCpuSince(first, await jvmCpu(pid));
    expect(later!.totalMs).toBeGreaterThanOrEqual(0);
    expect(later!.compilerMs).toBeGreaterThanOrEqual(0);
  });

  it('counts no JIT threads in a process that has none, and reads nothing for a process that is not there', async () => {
    const node = await jvmCpu(process.pid);
    expect(node!.totalMs).toBeGreaterThan(0);
    expect(node!.compilerMs).toBe(0);
    expect(await jvmCpu(undefined)).toBeNull();
    expect(await jvmCpu(2 ** 22 + 1)).toBeNull();
    expect(jvmCpuSince(null, node)).toBeNull();
  });
});
