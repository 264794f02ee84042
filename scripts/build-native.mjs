// Builds es-lock-proxy's ZooKeeper addon (native/binding.gyp) at postinstall, into native/build/.
//
// It links the ZooKeeper C client that the exactly pinned `zookeeper` package compiles in its own
// `install` script (deps/zookeeper-client-c: .libs/libzookeeper_st.a, include/, generated/, src/).
// That package is only read, never modified. npm runs the `install` scripts of all packages in
// parallel and every `postinstall` after them, so this runs once the C client exists.
//
//   node scripts/build-native.mjs                     build (npm runs it; `npm rebuild es-lock-proxy`)
//   node scripts/build-native.mjs --print-client-dir  the C client's directory (used by native/binding.gyp)
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const FIX = 'allow both install scripts and rebuild: `npm install-scripts approve zookeeper es-lock-proxy && npm rebuild zookeeper es-lock-proxy`';

/** Private definitions of the C client that native/zk-client-internals.h copies (see there). */
const CLIENT_INTERNALS = [
  ['#define COMPLETION_VOID 0', '#define COMPLETION_VOID 0'],
  ['typedef struct completion {', '} completion_t;'],
  ['typedef struct _completion_list {', '} completion_list_t;'],
];

function fail(message) {
  console.error(`es-lock-proxy: cannot build the ZooKeeper addon: ${message}`);
  process.exit(1);
}

function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

function zookeeperPackage() {
  let manifest;
  try {
    manifest = createRequire(join(ROOT, 'package.json')).resolve('zookeeper/package.json');
  } catch {
    fail('the `zookeeper` package is not installed next to es-lock-proxy');
  }
  const pinned = readJson(join(ROOT, 'package.json')).dependencies.zookeeper;
  const installed = readJson(manifest).version;
  if (installed !== pinned) fail(`zookeeper ${installed} is installed, es-lock-proxy is built against exactly ${pinned}`);
  return dirname(manifest);
}

function clientDir() {
  return join(zookeeperPackage(), 'deps', 'zookeeper-client-c');
}

function checkClientBuilt(dir) {
  const needed = ['.libs/libzookeeper_st.a', 'include/zookeeper.h', 'generated/zookeeper.jute.h', 'src/zk_adaptor.h', 'src/zookeeper.c'];
  const missing = needed.filter((file) => !existsSync(join(dir, file)));
  if (missing.length > 0) {
    fail(`the zookeeper package's install script has not built its C client (missing ${missing.join(', ')} in ${dir}); ${FIX}`);
  }
}

/** The copied layouts must still be the client's, word for word, or the addon would corrupt memory. */
function checkClientInternals(dir) {
  const ours = readFileSync(join(ROOT, 'native', 'zk-client-internals.h'), 'utf8');
  const theirs = readFileSync(join(dir, 'src', 'zookeeper.c'), 'utf8');
  for (const [start, end] of CLIENT_INTERNALS) {
    const from = ours.indexOf(start);
    const to = ours.indexOf(end, from) + end.length;
    if (from < 0 || to < end.length) fail(`native/zk-client-internals.h lacks "${start}"`);
    if (!theirs.includes(ours.slice(from, to))) {
      fail(`the C client's private "${start}" differs from native/zk-client-internals.h: update the copy for this zookeeper version`);
    }
  }
}

/** npm hands its bundled node-gyp to lifecycle scripts; outside npm, one on PATH. */
function nodeGyp() {
  const bundled = process.env.npm_config_node_gyp;
  if (bundled !== undefined && bundled !== '' && existsSync(bundled)) return [process.execPath, [bundled]];
  return ['node-gyp', []];
}

function build() {
  const dir = clientDir();
  checkClientBuilt(dir);
  checkClientInternals(dir);
  const [command, prefix] = nodeGyp();
  const result = spawnSync(command, [...prefix, 'rebuild', '--directory', 'native'], { cwd: ROOT, stdio: 'inherit' });
  if (result.error !== undefined) fail(`could not run node-gyp (${result.error.message}); run \`npm rebuild es-lock-proxy\``);
  if (result.status !== 0) fail(`node-gyp exited with ${result.status ?? result.signal} (a C++ toolchain is needed: python3, make, g++)`);
}

if (process.argv.includes('--print-client-dir')) {
  process.stdout.write(clientDir());
} else {
  build();
}
