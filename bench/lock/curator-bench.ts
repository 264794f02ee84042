import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../bench-script.js';
import type { BenchArgs } from './bench-args.js';
import type { BenchResult } from './bench-result.js';

const run = promisify(execFile);
const JAVA_DIR = '/usr/share/java';
const SOURCE = join(REPO_ROOT, 'bench/java/CuratorBench.java');
const JARS = [
  'curator-client.jar',
  'curator-framework.jar',
  'curator-recipes.jar',
  'zookeeper.jar',
  'zookeeper-jute.jar',
  'guava.jar',
  'slf4j-api.jar',
  'slf4j-nop.jar',
  'netty-handler.jar',
  'netty-transport.jar',
  'netty-common.jar',
  'netty-buffer.jar',
  'netty-codec.jar',
  'netty-resolver.jar',
  'netty-transport-native-epoll.jar',
  'netty-transport-native-unix-common.jar',
];

/** Classpath from Debian's jars, or the reason why the Curator comparison cannot run. */
function classpath(): string[] | string {
  if (!existsSync(JAVA_DIR)) return `${JAVA_DIR} missing`;
  const present = new Set(readdirSync(JAVA_DIR));
  const missing = ['curator-recipes.jar', 'zookeeper.jar'].filter((jar) => !present.has(jar));
  if (missing.length > 0) return `missing ${missing.join(', ')} (apt-get install libcurator-recipes-java zookeeper)`;
  return JARS.filter((jar) => present.has(jar)).map((jar) => join(JAVA_DIR, jar));
}

/** Compiles and runs bench/java/CuratorBench.java; null (with a message) when unavailable. */
export async function runCuratorBench(zk: string, args: BenchArgs): Promise<BenchResult | null> {
  const cp = classpath();
  if (typeof cp === 'string') {
    console.error(`curator comparison skipped: ${cp}`);
    return null;
  }
  const out = join(tmpdir(), 'es-lock-proxy-curator-bench');
  await mkdir(out, { recursive: true });
  try {
    await run('javac', ['-nowarn', '-d', out, '-cp', cp.join(':'), SOURCE]);
  } catch (error) {
    console.error(`curator comparison skipped: javac failed (${error instanceof Error ? error.message : String(error)})`);
    return null;
  }
  const javaArgs = ['-cp', [out, ...cp].join(':'), 'CuratorBench', zk, args.workload, String(args.ops), String(args.clients), String(args.keys), String(args.perClient)];
  const { stdout } = await run('java', javaArgs, { maxBuffer: 16 * 1024 * 1024 });
  const line = stdout.trim().split('\n').pop() ?? '';
  const parsed: unknown = JSON.parse(line);
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`unexpected Curator output: ${line}`);
  return { impl: 'curator', workload: args.workload, ops: args.ops, ops_per_s: 0, p50_ms: null, p99_ms: null, violations: 0, clients: args.clients, ...parsed };
}
