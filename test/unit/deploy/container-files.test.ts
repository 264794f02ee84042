import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROXY_NODE_FLAGS } from '../../../src/cli/node-flags.js';
import { CONFIG_KEYS } from '../../../src/config/config-keys.js';

const read = (name: string): string => readFileSync(fileURLToPath(new URL(`../../../${name}`, import.meta.url)), 'utf8');

/** The lines of one top-level service of a compose file (indentation-based; the file is plain block YAML). */
function serviceBlock(compose: string, service: string): string[] {
  const lines = compose.split('\n');
  const start = lines.indexOf(`  ${service}:`);
  if (start === -1) throw new Error(`no service ${service}`);
  const end = lines.findIndex((line, i) => i > start && /^ {0,2}\S/.test(line));
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

/** No Docker engine runs the tests: these check the files for the properties the README promises. */
describe('Dockerfile and docker-compose defaults', () => {
  const dockerfile = read('Dockerfile');
  const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const workdir = /^WORKDIR (\S+)$/m.exec(runtimeStage)?.[1] ?? '';
  const deadLetterDir = posix.join(workdir, CONFIG_KEYS['proxy.deadletter.dir'].defaultValue);

  it('the image declares a volume at the default dead-letter directory, created writable before it', () => {
    expect(deadLetterDir).toBe('/app/data/dead-letter');
    const volume = runtimeStage.indexOf(`VOLUME ["${deadLetterDir}"]`);
    const prepared = runtimeStage.indexOf(`RUN mkdir -p ${deadLetterDir} && chown -R node:node`);
    expect(volume).toBeGreaterThan(-1);
    expect(prepared).toBeGreaterThan(-1);
    expect(prepared).toBeLessThan(volume);
    expect(runtimeStage.indexOf('USER node')).toBeGreaterThan(volume);
  });

  it('compose mounts its named volume exactly there (a mount above it would leave dead letters in an anonymous volume)', () => {
    expect(serviceBlock(read('docker-compose.yml'), 'es-lock-proxy')).toContain(`      - dead-letter:${deadLetterDir}`);
  });

  it('compose keeps ZooKeeper on the compose network; the opt-in override publishes it on loopback only', () => {
    const compose = read('docker-compose.yml');
    expect(serviceBlock(compose, 'zookeeper').filter((line) => /^\s+ports:/.test(line))).toEqual([]);
    expect(serviceBlock(compose, 'elasticsearch')).toContain('      - "127.0.0.1:9200:9200"');
    expect(serviceBlock(read('docker-compose.zookeeper-port.yml'), 'zookeeper')).toEqual(['    ports:', '      - "127.0.0.1:2181:2181"', '']);
  });
});

describe('the V8 flags the proxy runs with', () => {
  it('npm start, the image and the bench start the proxy with the same flags (src/cli/node-flags.ts)', () => {
    const packageJson = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(PROXY_NODE_FLAGS.length).toBeGreaterThan(0);
    expect(packageJson.scripts.start).toMatch(new RegExp(`^node ${PROXY_NODE_FLAGS.join(' ')} dist/cli/main\\.js start `));
    const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1] ?? '[]';
    expect((JSON.parse(cmd) as string[]).slice(0, PROXY_NODE_FLAGS.length + 2)).toEqual(['node', ...PROXY_NODE_FLAGS, 'dist/cli/main.js']);
    expect(read('bench/bench-environment.ts')).toContain('startProxy([...PROXY_NODE_FLAGS, ...profileArgs])');
    expect(read('bench/bench-environment.ts')).toContain('startProxy(PROXY_NODE_FLAGS)');
    expect(read('bench/workloads/fencing.ts')).toContain('PROXY_NODE_FLAGS,');
  });
});
