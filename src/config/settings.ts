import type { Priority } from '../lock/lock-engine.js';
import type { ListenerTlsFiles } from '../tls/listener-tls.js';
import type { AuthSettings } from '../auth/auth-settings.js';

/**
 * The one validated, frozen view of the configuration. Built by `load-settings.ts` from
 * defaults < properties file < environment < CLI flags; nothing else reads raw keys.
 */
export interface Settings {
  readonly zookeeper: ZooKeeperSettings;
  readonly lock: LockSettings;
  readonly elasticsearch: ElasticsearchSettings;
  readonly proxy: ProxySettings;
  /** Where the settings were read from (for reload and the startup line). */
  readonly source: {
    readonly configFile: string | null;
    /** Non-fatal findings of the loader (unknown keys, repeated keys), for the caller to log. */
    readonly warnings?: readonly string[];
  };
}

export interface ZooKeeperSettings {
  /** `host:port[,host:port...]` as the C client takes it (chroot suffix allowed). */
  readonly servers: string;
  readonly sessionTimeoutMs: number;
  readonly connectionRetry: number;
  readonly connectionDelayMs: number;
  readonly foregroundPrefix: string;
  readonly backgroundPrefix: string;
  readonly lockRoot: string;
  /** `zookeeper.auth=digest:user:password`; lock nodes are created with a creator-only ACL when set. */
  readonly auth: { readonly scheme: 'digest'; readonly credentials: string } | null;
  /** Local hand-overs of a document lock while another process waits: at most this many … */
  readonly handOverMaxCount: number;
  /** … and for at most this long since the ZooKeeper grant. */
  readonly handOverMaxMs: number;
  /** Keep an unused document lock this long for this process's next request (0: release at once). */
  readonly lingerMs: number;
  /** Who deletes a document node the proxy created for a lock: that lock's release, or ZooKeeper's reaper only. */
  readonly documentCleanup: 'release' | 'reaper';
}

/** How long writes wait for their document locks, whatever the lock service. */
export interface LockSettings {
  /** Longest wait of a foreground write before it is answered 429. */
  readonly foregroundTimeoutMs: number;
  /** Longest wait of one attempt of a background write (it may be retried, then dead-lettered). */
  readonly backgroundTimeoutMs: number;
}

export interface ElasticsearchSettings {
  readonly hosts: readonly URL[];
  /** `elastic.request.retry.count`: re-queues of a background write whose lock wait timed out. */
  readonly requestRetryCount: number;
  readonly ssl: { readonly caFile: string | null; readonly verify: boolean };
  /** Credentials for the proxy's own cluster calls only, never added to client requests. */
  readonly auth:
    | { readonly kind: 'basic'; readonly username: string; readonly password: string }
    | { readonly kind: 'apiKey'; readonly apiKey: string }
    | null;
}

export type ByQueryPolicy = 'passthrough' | 'reject';
/** `zookeeper`: locks shared by every instance on the ensemble; `in-process`: this process only. */
export type LockService = 'zookeeper' | 'in-process';
export type LogFormat = 'json' | 'pretty';
/** `on`: locked writes carry a compare-and-set fence read under the lock, so a write that outlived its lock is refused. */
export type FencingMode = 'off' | 'on';

export interface ProxySettings {
  readonly listenHost: string;
  readonly listenPort: number;
  /** HTTPS on the proxy port when set; plain HTTP when null. */
  readonly listenTls: ListenerTlsFiles | null;
  readonly adminHost: string;
  readonly adminPort: number;
  readonly adminToken: string | null;
  readonly lockService: LockService;
  readonly lockHeader: string;
  readonly lockDefault: Priority;
  readonly deadLetterDir: string;
  readonly deadLetterIndex: string | null;
  readonly maxBodyBytes: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly logFormat: LogFormat;
  readonly slowLockMs: number;
  readonly byQueryPolicy: ByQueryPolicy;
  readonly upstreamTimeoutMs: number;
  /** Bytes of a streamed answer held in memory for a slow client; the rest goes to a temporary file. */
  readonly answerBufferBytes: number;
  readonly shutdownTimeoutMs: number;
  /** Lifetime of an alias look-up in the cache. */
  readonly aliasCacheTtlMs: number;
  /** Names the alias cache keeps (least recently used dropped first). */
  readonly aliasCacheSize: number;
  /** Whether locked writes are fenced (compare-and-set against the state read under the lock). */
  readonly fencing: FencingMode;
  /** Who a write is, checked with the cluster before any lock; foreground rights; each principal's share. */
  readonly auth: AuthSettings;
}
