/**
 * `npm run bench:lock -- [--zk HOST:PORT] --workload cold|warm|hot|spread --ops N [--clients C]
 *  [--impl es-lock-proxy|curator]` prints ONE JSON line on stdout (diagnostics go to stderr).
 * Without --zk it starts its own ZooKeeper (Debian jars) for the run.
 */
import { parseBenchArgs } from './lock/bench-args.js';
import type { BenchResult } from './lock/bench-result.js';
import { runCuratorBench } from './lock/curator-bench.js';
import { runEsLockBench } from './lock/es-lock-bench.js';
import { type ZooKeeperCluster, startZooKeeper } from '../test/support/zookeeper-server.js';
import { runScript } from './bench-script.js';

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  let own: ZooKeeperCluster | null = null;
  let zk = args.zk;
  if (zk === null) {
    own = await startZooKeeper(1, { jvm: 'production' });
    zk = own.connectString;
    console.error(`started ZooKeeper at ${zk}`);
  }
  try {
    const result: BenchResult | null = args.impl === 'curator' ? await runCuratorBench(zk, args) : await runEsLockBench(zk, args);
    if (result !== null) console.log(JSON.stringify(result));
  } finally {
    await own?.stop();
  }
}

runScript(main);
