// Patches the `zookeeper` binding's native poll handling, then rebuilds it (npm postinstall).
//
// The binding watches the C client's socket with a libuv poll handle keyed by file descriptor.
// When `zookeeper_interest` fails (e.g. a connect attempt timed out), the C client has already
// closed that socket, but the binding returned early and kept the poll handle bound to the closed
// descriptor until a later turn of the event loop. A socket Node opened meanwhile could receive
// the same descriptor number; closing the stale poll handle then removed that socket's epoll
// registration (libuv's uv__poll_stop invalidates the fd), and the socket never saw data again:
// seen as client and upstream connections of the proxy going silent during ZooKeeper reconnects.
// The fix closes the poll handle in the same call, while the descriptor cannot have been reused.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const MARKER = '/* es-lock-proxy: stale poll handle closed on interest error */';
const ORIGINAL = `        if (rc) {
            LOG_ERROR("yield:zookeeper_interest returned error: %d - %s\\n", rc, zerror(rc));
            return;
        }`;
const PATCHED = `        if (rc) {
            LOG_ERROR("yield:zookeeper_interest returned error: %d - %s\\n", rc, zerror(rc));
            ${MARKER}
            if (zk_io) {
                uv_close((uv_handle_t*) zk_io, delete_on_close);
                zk_io = NULL;
            }
            fd = -1;
            return;
        }`;

function bindingDirectory() {
  try {
    return dirname(createRequire(import.meta.url).resolve('zookeeper/package.json'));
  } catch {
    return null;
  }
}

const directory = bindingDirectory();
const source = directory === null ? null : join(directory, 'src', 'node-zk.cpp');
if (source === null || !existsSync(source)) {
  console.error('patch-zookeeper-binding: zookeeper binding not installed; nothing to patch');
  process.exit(0);
}
const text = readFileSync(source, 'utf8');
if (text.includes(MARKER)) process.exit(0);
if (!text.includes(ORIGINAL)) {
  console.error(`patch-zookeeper-binding: ${source} does not contain the expected code (binding version changed?); not patched`);
  process.exit(1);
}
writeFileSync(source, text.replace(ORIGINAL, PATCHED));
console.error('patch-zookeeper-binding: patched the poll handling of the zookeeper binding; rebuilding it');
// node-gyp-build would load the existing build; build-from-source forces the compile.
execFileSync('npm', ['rebuild', 'zookeeper'], { stdio: 'inherit', env: { ...process.env, npm_config_build_from_source: 'true' } });
