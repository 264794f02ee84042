import {
  booleanValue,
  byteSize,
  host,
  httpHeaderName,
  httpUrlList,
  indexName,
  integer,
  lockPrefix,
  lockRoot,
  MAX_INT32,
  nonEmptyText,
  nameList,
  oneOf,
  optional,
  port,
  secretText,
  zookeeperAuth,
  zookeeperServers,
  type DigestAuth,
  type ValueParser,
} from './value-parsers.js';
import type { ByQueryPolicy, FencingMode, LockService, LockSettings, LogFormat, ProxySettings } from './settings.js';
import type { Priority } from '../lock/lock-engine.js';
import type { AuthVerifyMode, ForegroundDenied } from '../auth/auth-settings.js';

/** Whether a changed value can be applied to a running proxy (SIGHUP) or needs a restart. */
export type ReloadMode = 'live' | 'restart';

export interface KeySpec<T> {
  /** Other spellings accepted in files, flags and (upper-cased) the environment. */
  readonly aliases: readonly string[];
  /** Extra environment variables honoured verbatim, below the `ES_LOCK_PROXY_` name. */
  readonly envAliases: readonly string[];
  /** Raw text as it would appear in the file; '' means unset. */
  readonly defaultValue: string;
  readonly description: string;
  /** Values never printed: logs, error messages and the startup line show "[redacted]". */
  readonly secret: boolean;
  /**
   * Configures ZooKeeper itself: ignored (not validated, not used, named in a start-up note when
   * set) with `proxy.lock.service=in-process`.
   */
  readonly zookeeperOnly: boolean;
  readonly reload: ReloadMode;
  readonly parse: ValueParser<T>;
}

function key<T>(spec: Omit<KeySpec<T>, 'aliases' | 'envAliases' | 'secret' | 'zookeeperOnly'> & Partial<KeySpec<T>>): KeySpec<T> {
  return { aliases: [], envAliases: [], secret: false, zookeeperOnly: false, ...spec };
}

const timeoutMs = integer(0);

/** The parsed type of every key; `null` is "unset" for keys without a default. */
export interface ConfigValues {
  readonly 'zookeeper.servers': string;
  readonly 'zookeeper.session.timeout': number;
  readonly 'zookeeper.connection.retry': number;
  readonly 'zookeeper.connection.delay': number;
  readonly 'zookeeper.foregound.lock.prefix': string;
  readonly 'zookeeper.backgound.lock.prefix': string;
  readonly 'zookeeper.foregound.task.timeout': number;
  readonly 'zookeeper.backgound.task.timeout': number;
  readonly 'elastic.request.retry.count': number;
  readonly 'elasticsearch.hosts': URL[];
  readonly 'elasticsearch.ssl.ca': string | null;
  readonly 'elasticsearch.ssl.verify': boolean;
  readonly 'elasticsearch.auth.username': string | null;
  readonly 'elasticsearch.auth.password': string | null;
  readonly 'elasticsearch.auth.api_key': string | null;
  readonly 'proxy.listen.host': string;
  readonly 'proxy.listen.port': number;
  readonly 'proxy.listen.tls.cert': string | null;
  readonly 'proxy.listen.tls.key': string | null;
  readonly 'proxy.listen.tls.ca': string | null;
  readonly 'proxy.admin.host': string;
  readonly 'proxy.admin.port': number;
  readonly 'proxy.admin.token': string | null;
  readonly 'proxy.lock.service': LockService;
  readonly 'zookeeper.lock.root': string;
  readonly 'zookeeper.auth': DigestAuth | null;
  readonly 'zookeeper.lock.handover.max.count': number;
  readonly 'zookeeper.lock.handover.max.ms': number;
  readonly 'zookeeper.lock.linger.ms': number;
  readonly 'zookeeper.lock.document.cleanup': 'release' | 'reaper';
  readonly 'proxy.lock.header': string;
  readonly 'proxy.lock.default': Priority;
  readonly 'proxy.byquery.policy': ByQueryPolicy;
  readonly 'proxy.deadletter.dir': string;
  readonly 'proxy.deadletter.index': string | null;
  readonly 'proxy.max.body.bytes': number;
  readonly 'proxy.upstream.timeout.ms': number;
  readonly 'proxy.answer.buffer.bytes': number;
  readonly 'proxy.shutdown.timeout.ms': number;
  readonly 'proxy.alias.cache.ttl.ms': number;
  readonly 'proxy.alias.cache.size': number;
  readonly 'proxy.fencing': FencingMode;
  readonly 'proxy.log.level': ProxySettings['logLevel'];
  readonly 'proxy.log.format': LogFormat;
  readonly 'proxy.log.slow.lock.ms': number;
  readonly 'proxy.auth.verify': AuthVerifyMode;
  readonly 'proxy.auth.timeout.ms': number;
  readonly 'proxy.auth.cache.size': number;
  readonly 'proxy.auth.cache.ttl.ms': number;
  readonly 'proxy.auth.cache.refusal.ttl.ms': number;
  readonly 'proxy.auth.privileges': 'off' | 'on';
  readonly 'proxy.auth.refusal.delay.after': number;
  readonly 'proxy.auth.refusal.delay.ms': number;
  readonly 'proxy.auth.refusal.delay.max.ms': number;
  readonly 'proxy.auth.refusal.close.after': number;
  readonly 'proxy.priority.foreground.allow': readonly string[];
  readonly 'proxy.priority.foreground.denied': ForegroundDenied;
  readonly 'proxy.lock.max.waiting.per.principal': number;
}

export type ConfigKey = keyof ConfigValues;

/** A getter typed per key, so callers need no casts: `value('proxy.listen.port')` is a number. */
export type ValueOf = <K extends ConfigKey>(key: K) => ConfigValues[K];

/**
 * Every configuration key, in the order of the shipped properties file: the original
 * Contentserv keys first, with their original (mis)spellings canonical, then the proxy's own.
 * This table is the single source for parsing, environment names, defaults, reload behaviour
 * and the configuration reference of docs/configuration.md (`renderConfigReference`).
 */
export const CONFIG_KEYS: { readonly [K in ConfigKey]: KeySpec<ConfigValues[K]> } = {
  'zookeeper.servers': key({
    zookeeperOnly: true,
    defaultValue: 'localhost:2181',
    description: 'ZooKeeper ensemble as comma-separated `host:port` pairs, optional `/chroot` suffix.',
    reload: 'restart',
    parse: zookeeperServers,
  }),
  'zookeeper.session.timeout': key({
    zookeeperOnly: true,
    defaultValue: '5000',
    description: 'ZooKeeper session timeout in ms (the server clamps it to 2–20 × its tickTime).',
    reload: 'restart',
    parse: integer(1),
  }),
  'zookeeper.connection.retry': key({
    zookeeperOnly: true,
    defaultValue: '5',
    description: 'Attempts to open a new ZooKeeper session after it expired or could not be established.',
    reload: 'restart',
    parse: integer(0),
  }),
  'zookeeper.connection.delay': key({
    zookeeperOnly: true,
    defaultValue: '1000',
    description: 'Delay in ms between those attempts.',
    reload: 'restart',
    parse: timeoutMs,
  }),
  'zookeeper.foregound.lock.prefix': key({
    zookeeperOnly: true,
    aliases: ['zookeeper.foreground.lock.prefix'],
    defaultValue: 'A',
    description: 'Name prefix of foreground lock nodes; must sort before the background prefix (lower sorts first = higher priority).',
    reload: 'restart',
    parse: lockPrefix,
  }),
  'zookeeper.backgound.lock.prefix': key({
    zookeeperOnly: true,
    aliases: ['zookeeper.background.lock.prefix'],
    defaultValue: 'B',
    description: 'Name prefix of background lock nodes.',
    reload: 'restart',
    parse: lockPrefix,
  }),
  'zookeeper.foregound.task.timeout': key({
    aliases: ['zookeeper.foreground.task.timeout'],
    defaultValue: '2000',
    description: 'Longest lock wait in ms for a foreground write before it is answered 429.',
    reload: 'live',
    parse: timeoutMs,
  }),
  'zookeeper.backgound.task.timeout': key({
    aliases: ['zookeeper.background.task.timeout'],
    defaultValue: '2000',
    description: 'Longest lock wait in ms for one attempt of a background write.',
    reload: 'live',
    parse: timeoutMs,
  }),
  'elastic.request.retry.count': key({
    defaultValue: '3',
    description: 'Re-queues of a background write whose lock wait timed out before it goes to the dead-letter queue.',
    reload: 'live',
    parse: integer(0, 1000),
  }),
  'elasticsearch.hosts': key({
    defaultValue: 'http://localhost:9200',
    description: 'Upstream cluster as comma-separated `http://`/`https://` URLs, used round-robin.',
    reload: 'restart',
    parse: httpUrlList,
  }),
  'elasticsearch.ssl.ca': key({
    defaultValue: '',
    description: 'PEM file of the CA that signed the cluster’s certificate (unset: the system CAs).',
    reload: 'restart',
    parse: optional(nonEmptyText),
  }),
  'elasticsearch.ssl.verify': key({
    defaultValue: 'true',
    description: 'Verify the cluster’s TLS certificate and host name (`false` only for testing).',
    reload: 'restart',
    parse: booleanValue,
  }),
  'elasticsearch.auth.username': key({
    defaultValue: '',
    description: 'Basic-auth user for the proxy’s own cluster calls (alias resolution, dead-letter index); never added to client requests.',
    reload: 'restart',
    parse: optional(nonEmptyText),
  }),
  'elasticsearch.auth.password': key({
    defaultValue: '',
    description: 'Password for `elasticsearch.auth.username`.',
    secret: true,
    reload: 'restart',
    parse: optional(secretText),
  }),
  'elasticsearch.auth.api_key': key({
    defaultValue: '',
    description: 'Encoded API key for the proxy’s own cluster calls (instead of username/password).',
    secret: true,
    reload: 'restart',
    parse: optional(secretText),
  }),
  'proxy.listen.host': key({
    defaultValue: '127.0.0.1',
    description: 'Address the proxy port binds to (`0.0.0.0` to serve other machines).',
    reload: 'restart',
    parse: host,
  }),
  'proxy.listen.port': key({
    defaultValue: '9201',
    description: 'Port applications use instead of Elasticsearch’s; every path on it belongs to Elasticsearch.',
    reload: 'restart',
    parse: port,
  }),
  'proxy.listen.tls.cert': key({
    defaultValue: '',
    description:
      'PEM certificate (chain) of the proxy port; with `proxy.listen.tls.key` the port speaks HTTPS only. The files are re-read on SIGHUP and when they change: new connections get the new certificate, a bad file is logged and the served one kept.',
    reload: 'restart',
    parse: optional(nonEmptyText),
  }),
  'proxy.listen.tls.key': key({
    defaultValue: '',
    description: 'PEM private key (unencrypted) of `proxy.listen.tls.cert`.',
    reload: 'restart',
    parse: optional(nonEmptyText),
  }),
  'proxy.listen.tls.ca': key({
    defaultValue: '',
    description: 'PEM CA certificate(s): when set, the proxy port requires a client certificate signed by one of them (mutual TLS).',
    reload: 'restart',
    parse: optional(nonEmptyText),
  }),
  'proxy.admin.host': key({
    defaultValue: '127.0.0.1',
    description: 'Address the admin listener (health, readiness, metrics, locks) binds to.',
    reload: 'restart',
    parse: host,
  }),
  'proxy.admin.port': key({
    defaultValue: '9202',
    description: 'Port of the admin listener.',
    reload: 'restart',
    parse: port,
  }),
  'proxy.admin.token': key({
    defaultValue: '',
    description: 'Bearer token required by admin operations that change state (force-release); unset disables them.',
    secret: true,
    reload: 'restart',
    parse: optional(secretText),
  }),
  'proxy.lock.service': key({
    defaultValue: 'zookeeper',
    description:
      'Where document locks live: `zookeeper` (shared by every proxy instance using the ensemble) or `in-process` (no ZooKeeper: locks hold within this one process only; run a single instance).',
    reload: 'restart',
    parse: oneOf(['zookeeper', 'in-process']),
  }),
  'zookeeper.lock.root': key({
    zookeeperOnly: true,
    defaultValue: '/es-locks',
    description: 'Znode under which lock nodes are created.',
    reload: 'restart',
    parse: lockRoot,
  }),
  'zookeeper.auth': key({
    zookeeperOnly: true,
    defaultValue: '',
    description: '`digest:user:password`; when set, lock nodes are created with a creator-only ACL.',
    secret: true,
    reload: 'restart',
    parse: optional(zookeeperAuth),
  }),
  'zookeeper.lock.handover.max.count': key({
    defaultValue: '16',
    description:
      'Hand-overs of a document lock between requests of this proxy, without a ZooKeeper commit, since it last saw the document\'s queue empty (0: always go through the queue).',
    reload: 'restart',
    parse: integer(0, 1_000_000),
    zookeeperOnly: true,
  }),
  'zookeeper.lock.handover.max.ms': key({
    defaultValue: '100',
    description: 'Longest time in ms this proxy keeps passing a document lock between its own requests since it last saw the document\'s queue empty.',
    reload: 'restart',
    parse: timeoutMs,
    zookeeperOnly: true,
  }),
  'zookeeper.lock.linger.ms': key({
    defaultValue: '50',
    description:
      'How long in ms this proxy keeps the lock of a document it writes again and again after its last request released it, so that its next request for the document takes it without ZooKeeper; given up at once when another process queues for it (0: release at once).',
    reload: 'restart',
    parse: integer(0, 60_000),
    zookeeperOnly: true,
  }),
  'zookeeper.lock.document.cleanup': key({
    defaultValue: 'release',
    description:
      'Who deletes a document node this proxy created for a lock: `release` (that lock\'s release, unless this proxy locks the document again within a second; ZooKeeper\'s reaper deletes at most 10,000 empty containers a minute) or `reaper` (ZooKeeper\'s container reaper only). Use `reaper` while clients of the original plugin lock on the same znodes: they create a missing document node and then queue under it, and a delete in between fails their queue entry (NONODE).',
    reload: 'restart',
    parse: oneOf(['release', 'reaper']),
    zookeeperOnly: true,
  }),
  'proxy.lock.header': key({
    defaultValue: 'X-Lock-Type',
    description: 'Request header choosing the lock priority (`foreground`/`background`); stripped before forwarding.',
    reload: 'restart',
    parse: httpHeaderName,
  }),
  'proxy.lock.default': key({
    defaultValue: 'foreground',
    description: 'Priority of writes that carry no lock header.',
    reload: 'restart',
    parse: oneOf(['foreground', 'background']),
  }),
  'proxy.byquery.policy': key({
    defaultValue: 'passthrough',
    description: '`_update_by_query`/`_delete_by_query`/`_reindex` cannot be locked per document: `passthrough` (logged) or `reject` (403).',
    reload: 'restart',
    parse: oneOf(['passthrough', 'reject']),
  }),
  'proxy.deadletter.dir': key({
    defaultValue: 'data/dead-letter',
    description: 'Directory of the dead-letter queue’s JSON-lines files.',
    reload: 'restart',
    parse: nonEmptyText,
  }),
  'proxy.deadletter.index': key({
    defaultValue: '',
    description: 'Elasticsearch index that also receives dead letters, shared by all proxy instances (unset: files only).',
    reload: 'restart',
    parse: optional(indexName),
  }),
  'proxy.max.body.bytes': key({
    defaultValue: '100mb',
    description: 'Largest request body accepted (413 above it), in bytes or with a unit such as `512kb`, `100mb`; a gzip or deflate body the proxy reads is held to it once inflated too.',
    reload: 'restart',
    parse: byteSize,
  }),
  'proxy.upstream.timeout.ms': key({
    defaultValue: '60000',
    description:
      'Longest wait in ms for the cluster: for the head of its answer once the request is handed to a connection, and then between two pieces of its body. Past it the exchange is ended: the client gets a 504, or its connection is cut when the head of the answer was already relayed.',
    reload: 'restart',
    parse: integer(1),
  }),
  'proxy.answer.buffer.bytes': key({
    defaultValue: '1mb',
    description:
      'Bytes of a streamed answer (a `_bulk` sent whole under its locks) kept in memory for a client that reads it slower than Elasticsearch sends it; the rest waits in a file in the temporary directory, so the locks are released once Elasticsearch has answered, whatever the client does. A client that takes no byte of its answer for 30 s has its connection closed.',
    reload: 'restart',
    parse: byteSize,
  }),
  'proxy.shutdown.timeout.ms': key({
    defaultValue: '30000',
    description: 'Longest wait in ms for in-flight requests on SIGTERM/SIGINT.',
    reload: 'restart',
    parse: timeoutMs,
  }),
  'proxy.alias.cache.ttl.ms': key({
    defaultValue: '5000',
    description: 'How long in ms the answer of an alias look-up (`GET /{name}/_alias`) is reused; a name used in the last fifth of that time is looked up again in the background.',
    reload: 'live',
    parse: timeoutMs,
  }),
  'proxy.alias.cache.size': key({
    defaultValue: '10000',
    description: 'Index and alias names whose look-up is kept; the least recently used are dropped first.',
    reload: 'restart',
    parse: integer(1, 10_000_000),
  }),
  'proxy.fencing': key({
    defaultValue: 'off',
    description:
      '`on`: every locked write Elasticsearch can check is sent with the `_seq_no`/`_primary_term` read under its lock (`if_seq_no`, or `op_type=create` for a missing document), so a write that outlived its lock is refused with 409 instead of overwriting the next holder’s (one realtime read per write or per sub-bulk; see Fencing). `off`: writes are forwarded as they came.',
    reload: 'live',
    parse: oneOf(['off', 'on']),
  }),
  'proxy.log.level': key({
    envAliases: ['LOG_LEVEL'],
    defaultValue: 'info',
    description: 'Log level: fatal, error, warn, info, debug, trace or silent (`LOG_LEVEL` also works).',
    reload: 'live',
    parse: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  'proxy.log.format': key({
    defaultValue: 'json',
    description: '`json` (one object per line) or `pretty` (human-readable, for a terminal).',
    reload: 'restart',
    parse: oneOf(['json', 'pretty']),
  }),
  'proxy.log.slow.lock.ms': key({
    defaultValue: '500',
    description: 'Lock waits longer than this many ms are logged at warn instead of info.',
    reload: 'live',
    parse: integer(0, MAX_INT32),
  }),
  'proxy.auth.verify': key({
    defaultValue: 'auto',
    description:
      'Check a write\'s credentials with the cluster (`GET /_security/_authenticate` with the client\'s `Authorization`) before it takes any lock: `on`, `off`, or `auto` (on when the cluster answers that call without credentials with 401 or an anonymous user; detected at start and on reload). A refused write gets the cluster\'s 401 and takes no lock. See docs/security.md.',
    reload: 'live',
    parse: oneOf(['auto', 'on', 'off']),
  }),
  'proxy.auth.timeout.ms': key({
    defaultValue: '5000',
    description: 'Longest wait in ms for the cluster\'s answer to a credential check; past it the write is answered 504 with nothing locked or sent.',
    reload: 'live',
    parse: integer(1),
  }),
  'proxy.auth.cache.size': key({
    defaultValue: '10000',
    description: 'Credential checks kept, keyed by a keyed hash of the credentials (never the credentials); the least recently used are dropped first.',
    reload: 'restart',
    parse: integer(1, 10_000_000),
  }),
  'proxy.auth.cache.ttl.ms': key({
    defaultValue: '30000',
    description: 'How long in ms an accepted credential is trusted without asking the cluster again: the longest a revoked key or password can still take locks.',
    reload: 'live',
    parse: integer(0, MAX_INT32),
  }),
  'proxy.auth.cache.refusal.ttl.ms': key({
    defaultValue: '1000',
    description: 'How long in ms a refused credential is answered 401 without asking the cluster again.',
    reload: 'live',
    parse: integer(0, MAX_INT32),
  }),
  'proxy.auth.privileges': key({
    defaultValue: 'off',
    description:
      '`on`: a single-document write is also checked with the cluster\'s `POST /_security/user/_has_privileges` for its index and the actions Elasticsearch authorizes it as (`indices:data/write/index`, `…:op_type/index`, `…:op_type/create`, `indices:data/write/update`, `indices:data/write/delete`) before its lock, the answer kept per credential and index for `proxy.auth.cache.ttl.ms`; one the cluster would refuse gets its 403 and takes no lock. Bulk items are authorized by the cluster one by one.',
    reload: 'live',
    parse: oneOf(['off', 'on']),
  }),
  'proxy.auth.refusal.delay.after': key({
    defaultValue: '3',
    description:
      'Credential refusals (401) in a row on one client connection answered at once; each further one is answered after a delay (`proxy.auth.refusal.delay.ms`), with the connection\'s reading paused meanwhile. A write whose credentials are accepted ends the run. See docs/security.md.',
    reload: 'live',
    parse: integer(0, MAX_INT32),
  }),
  'proxy.auth.refusal.delay.ms': key({
    defaultValue: '100',
    description: 'The first delay in ms of a throttled refusal; it doubles with each further refusal in a row on the connection, up to `proxy.auth.refusal.delay.max.ms`.',
    reload: 'live',
    parse: integer(1, MAX_INT32),
  }),
  'proxy.auth.refusal.delay.max.ms': key({
    defaultValue: '2000',
    description: 'The longest delay in ms of a throttled refusal; 0 turns the delays off (every refusal answered at once).',
    reload: 'live',
    parse: integer(0, MAX_INT32),
  }),
  'proxy.auth.refusal.close.after': key({
    defaultValue: '20',
    description: 'Close a client connection after answering this many credential refusals in a row on it; 0: never.',
    reload: 'live',
    parse: integer(0, MAX_INT32),
  }),
  'proxy.priority.foreground.allow': key({
    defaultValue: '',
    description:
      'Comma-separated users, roles and API key names whose writes may be foreground (`user:`, `role:` or `api_key:` before a name restricts it to that kind); empty: everyone. Needs credential checks: refused at start and on reload with `proxy.auth.verify=off`.',
    reload: 'live',
    parse: nameList,
  }),
  'proxy.priority.foreground.denied': key({
    defaultValue: 'background',
    description: 'A foreground write from someone not in `proxy.priority.foreground.allow`: `background` (locked as background, logged, counted, and said in the `X-Lock-Priority` answer header) or `reject` (403).',
    reload: 'live',
    parse: oneOf(['background', 'reject']),
  }),
  'proxy.lock.max.waiting.per.principal': key({
    defaultValue: '0',
    description:
      'Most locked writes one authenticated user or API key may have in this proxy at once (waiting for their locks or holding them); past it 429 with `Retry-After`, before any lock. 0: no bound (writes without a known principal are never bounded).',
    reload: 'live',
    parse: integer(0),
  }),
};

export const CONFIG_KEY_NAMES: readonly ConfigKey[] = Object.freeze(objectKeys(CONFIG_KEYS));

/**
 * `Settings.lock` read from the original plugin's key names, misspellings included, so that its
 * properties files keep working: the timeouts apply whatever the lock service, ZooKeeper or not.
 */
export const LOCK_TIMEOUT_KEYS = Object.freeze({
  foregroundTimeoutMs: 'zookeeper.foregound.task.timeout',
  backgroundTimeoutMs: 'zookeeper.backgound.task.timeout',
} as const satisfies { readonly [K in keyof LockSettings]: ConfigKey });

export const ENV_PREFIX = 'ES_LOCK_PROXY_';

export function envNameOf(name: string): string {
  return ENV_PREFIX + name.toUpperCase().replace(/\./g, '_');
}

export function isConfigKey(name: string): name is ConfigKey {
  return Object.hasOwn(CONFIG_KEYS, name);
}

/** Maps every accepted spelling (canonical or alias) to its canonical key. */
export function canonicalKeyOf(name: string): ConfigKey | null {
  if (isConfigKey(name)) return name;
  return CONFIG_KEY_NAMES.find((candidate) => specOf(candidate).aliases.includes(name)) ?? null;
}

/** The keys `proxy.lock.service=in-process` ignores. */
export const ZOOKEEPER_ONLY_KEYS: readonly ConfigKey[] = Object.freeze(CONFIG_KEY_NAMES.filter((name) => CONFIG_KEYS[name].zookeeperOnly));

export function specOf<K extends ConfigKey>(name: K): KeySpec<ConfigValues[K]> {
  return CONFIG_KEYS[name];
}

function objectKeys<T extends object>(value: T): Array<keyof T & string> {
  return Object.keys(value).filter((name): name is keyof T & string => Object.hasOwn(value, name));
}
