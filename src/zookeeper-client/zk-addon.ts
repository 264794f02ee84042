import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../config/config-error.js';

/**
 * Loads es-lock-proxy's own ZooKeeper addon (native/, built into native/build at postinstall by
 * scripts/build-native.mjs) and checks that it is ours and speaks this version's interface.
 * Loaded on first use only: a proxy that runs without ZooKeeper never needs it.
 */
export const ZK_ADDON_NAME = 'es-lock-proxy-zk';
/** Bumped with native/node-zk.cpp's ES_ADDON_INTERFACE whenever the native interface changes. */
export const ZK_ADDON_INTERFACE = 3;

const ADDON_FILE = join('native', 'build', 'Release', 'es_lock_proxy_zk.node');
const FIX =
  'run `npm install-scripts approve zookeeper es-lock-proxy && npm rebuild zookeeper es-lock-proxy` where es-lock-proxy is installed (README: Install), or set proxy.lock.service=in-process to run a single instance without ZooKeeper';

export type NativeCompletion = (rc: number, text: unknown, ...result: unknown[]) => void;
export type NativeWatcher = (type: number, state: number, path: string) => void;

/** `a_multi`'s answer (zk-multi-native.ts): per-op arrays, all null when the request itself failed. */
export type NativeMultiCompletion = (
  rc: number,
  text: unknown,
  rcs: number[] | null,
  paths: (string | undefined)[] | null,
  stats: Float64Array | null,
  owners: (string | undefined)[] | null,
  zxid: unknown,
) => void;

/** A handle of the addon: the C client's asynchronous API, results as the C client gives them. */
export interface NativeZooKeeper {
  /** Assigned by us: the addon emits `connect`, `connecting`, `close` (with a code) and node events through it. */
  emit: (event: string, self: unknown, data: unknown) => void;
  init(options: { readonly connect: string; readonly timeout: number; readonly debug_level: number }): unknown;
  /** `true`: free the handle without zookeeper_close's blocking close request (see native/zk-close.h). */
  close(dropConnection?: boolean): unknown;
  readonly client_id: unknown;
  readonly timeout: unknown;
  a_create(path: string, data: string | Buffer, flags: number, done: NativeCompletion): number;
  a_create2(path: string, data: string | Buffer, flags: number, acl: number, done: NativeCompletion): number;
  a_multi(kinds: Int32Array, ints: Int32Array, paths: string[], data: (string | Buffer | undefined)[], done: NativeMultiCompletion): number;
  a_delete_(path: string, version: number, done: NativeCompletion): number;
  a_get(path: string, watch: boolean, done: NativeCompletion): number;
  aw_get(path: string, watcher: NativeWatcher, done: NativeCompletion): number;
  aw_exists(path: string, watcher: NativeWatcher, done: NativeCompletion): number;
  a_get_children(path: string, watch: boolean, done: NativeCompletion): number;
  aw_get_children(path: string, watcher: NativeWatcher, done: NativeCompletion): number;
  a_get_children2(path: string, watch: boolean, done: NativeCompletion): number;
  /** getEphemerals (ZooKeeper 3.6+): this session's ephemeral nodes under a path prefix. */
  a_get_ephemerals(prefix: string, done: NativeCompletion): number;
  aw_get_children2(path: string, watcher: NativeWatcher, done: NativeCompletion): number;
  a_set(path: string, data: string | Buffer, version: number, done: NativeCompletion): number;
  a_set_acl(path: string, version: number, acl: readonly { perm: number; scheme: string; auth: string }[], done: NativeCompletion): number;
  add_auth(scheme: string, credentials: string, done: NativeCompletion): number;
  a_close_session(done: NativeCompletion): number;
}

/** The C client's constants, as the addon exports them on its constructor. */
export interface NativeConstants {
  readonly ZOO_PERSISTENT: number;
  readonly ZOO_PERSISTENT_SEQUENTIAL: number;
  readonly ZOO_EPHEMERAL: number;
  readonly ZOO_EPHEMERAL_SEQUENTIAL: number;
  readonly ZOO_CONTAINER: number;
  readonly ZOO_CREATED_EVENT: number;
  readonly ZOO_DELETED_EVENT: number;
  readonly ZOO_CHANGED_EVENT: number;
  readonly ZOO_CHILD_EVENT: number;
  readonly ZOO_PERM_ALL: number;
}

export interface ZkAddon {
  readonly ZooKeeper: NativeConstants & (new () => NativeZooKeeper);
}

/** The addon is missing, cannot be loaded or is not ours: the CLI prints this one line and exits 2. */
export class ZkAddonError extends ConfigError {
  constructor(problem: string, cause?: unknown) {
    super(`the ZooKeeper addon ${problem}: ${FIX}`, cause === undefined ? {} : { cause });
    this.name = 'ZkAddonError';
  }
}

let loaded: ZkAddon | undefined;

/** The addon, loaded and checked once; throws `ZkAddonError` (a one-line `ConfigError`). */
export function loadZkAddon(): ZkAddon {
  loaded ??= checkZkAddon(requireAddon(addonPath()));
  return loaded;
}

/** The es-lock-proxy package root, wherever this module sits below it (src/ or dist/). */
function packageRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(directory, 'package.json');
    if (existsSync(manifest) && packageName(manifest) === 'es-lock-proxy') return directory;
    const parent = dirname(directory);
    if (parent === directory) throw new ZkAddonError('cannot be located (no es-lock-proxy package.json above this module)');
    directory = parent;
  }
}

function packageName(manifest: string): unknown {
  try {
    const parsed: unknown = JSON.parse(readFileSync(manifest, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && 'name' in parsed ? parsed.name : undefined;
  } catch {
    return undefined;
  }
}

function addonPath(): string {
  const path = join(packageRoot(), ADDON_FILE);
  if (!existsSync(path)) {
    throw new ZkAddonError(`is not built (${path} is missing: were the install scripts of zookeeper and es-lock-proxy skipped?)`);
  }
  return path;
}

function requireAddon(path: string): unknown {
  try {
    const required: unknown = createRequire(import.meta.url)(path);
    return required;
  } catch (error) {
    const reason = error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
    throw new ZkAddonError(`cannot be loaded (${reason})`, error);
  }
}

/** Trusts a loaded module only if it is our addon with this version's interface. */
export function checkZkAddon(module: unknown): ZkAddon {
  const record = typeof module === 'object' && module !== null ? (module as Record<string, unknown>) : {};
  if (record.addon !== ZK_ADDON_NAME) {
    throw new ZkAddonError(`at ${ADDON_FILE} is not es-lock-proxy's (it calls itself ${JSON.stringify(record.addon ?? null)})`);
  }
  if (record.interfaceVersion !== ZK_ADDON_INTERFACE) {
    throw new ZkAddonError(
      `was built from another version of es-lock-proxy (interface ${String(record.interfaceVersion)}, this version needs ${ZK_ADDON_INTERFACE})`,
    );
  }
  if (typeof record.ZooKeeper !== 'function') throw new ZkAddonError('exports no ZooKeeper class');
  return record as unknown as ZkAddon;
}
