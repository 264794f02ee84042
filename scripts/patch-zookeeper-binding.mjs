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
//
// Second patch (issue #10 hole 8, "an answer lost"): the C client is built without SOCK_CLOEXEC,
// so every child process started by the proxy's process inherits the ZooKeeper socket. When the
// C client later closes it, the child keeps the connection alive, and its epoll registration stays
// in this process's event loop, reporting hang-ups under the old descriptor number to whichever
// socket Node gives that number next: an accepted client connection then ends right after its
// request, without an answer. The binding marks the C client's socket close-on-exec each time it
// learns the descriptor (the C client is single-threaded: no fork can come in between).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const PATCHES = [
  {
    marker: '/* es-lock-proxy: stale poll handle closed on interest error */',
    original: `        if (rc) {
            LOG_ERROR("yield:zookeeper_interest returned error: %d - %s\\n", rc, zerror(rc));
            return;
        }`,
    patched: (marker) => `        if (rc) {
            LOG_ERROR("yield:zookeeper_interest returned error: %d - %s\\n", rc, zerror(rc));
            ${marker}
            if (zk_io) {
                uv_close((uv_handle_t*) zk_io, delete_on_close);
                zk_io = NULL;
            }
            fd = -1;
            return;
        }`,
  },
  {
    marker: '/* es-lock-proxy: ZooKeeper socket marked close-on-exec */',
    original: `        if (fd == -1 ) {
            if (zk_io) {`,
    patched: (marker) => `        #ifndef WIN32
        ${marker}
        if (fd != -1) fcntl(fd, F_SETFD, FD_CLOEXEC);
        #endif
        if (fd == -1 ) {
            if (zk_io) {`,
  },
  {
    marker: '/* es-lock-proxy: fcntl declared */',
    original: `#include <assert.h>\n`,
    patched: (marker) => `#include <assert.h>\n#ifndef WIN32\n${marker}\n#include <fcntl.h>\n#endif\n`,
  },
];

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
let text = readFileSync(source, 'utf8');
const pending = PATCHES.filter((patch) => !text.includes(patch.marker));
if (pending.length === 0) process.exit(0);
for (const patch of pending) {
  if (!text.includes(patch.original)) {
    console.error(`patch-zookeeper-binding: ${source} does not contain the expected code (binding version changed?); not patched`);
    process.exit(1);
  }
  text = text.replace(patch.original, patch.patched(patch.marker));
}
writeFileSync(source, text);
console.error(`patch-zookeeper-binding: patched the zookeeper binding (${pending.length} change(s)); rebuilding it`);
// node-gyp-build would load the existing build; build-from-source forces the compile.
execFileSync('npm', ['rebuild', 'zookeeper'], { stdio: 'inherit', env: { ...process.env, npm_config_build_from_source: 'true' } });
