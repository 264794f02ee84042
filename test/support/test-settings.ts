import type { ElasticsearchSettings, ProxySettings, Settings, ZooKeeperSettings } from '../../src/config/settings.js';

/** Per-section overrides; `elasticsearch.hosts` also takes URL strings. */
export interface TestSettingsOverrides {
  readonly zookeeper?: Partial<ZooKeeperSettings>;
  readonly elasticsearch?: Partial<Omit<ElasticsearchSettings, 'hosts'>> & { readonly hosts?: readonly (URL | string)[] };
  readonly proxy?: Partial<ProxySettings>;
}

/**
 * Settings for tests: issue 2's defaults, except that both listeners bind port 0 on loopback
 * (the running proxy reports the ports it got) and logs are silent.
 */
export function testSettings(overrides: TestSettingsOverrides = {}): Settings {
  const zookeeper: ZooKeeperSettings = {
    servers: 'localhost:2181',
    sessionTimeoutMs: 5000,
    connectionRetry: 5,
    connectionDelayMs: 1000,
    foregroundPrefix: 'A',
    backgroundPrefix: 'B',
    foregroundTimeoutMs: 2000,
    backgroundTimeoutMs: 2000,
    lockRoot: '/es-locks',
    auth: null,
    ...overrides.zookeeper,
  };
  const { hosts, ...elasticsearchRest } = overrides.elasticsearch ?? {};
  const elasticsearch: ElasticsearchSettings = {
    requestRetryCount: 3,
    ssl: { caFile: null, verify: true },
    auth: null,
    ...elasticsearchRest,
    hosts: (hosts ?? ['http://localhost:9200']).map((host) => (typeof host === 'string' ? new URL(host) : host)),
  };
  const proxy: ProxySettings = {
    listenHost: '127.0.0.1',
    listenPort: 0,
    adminHost: '127.0.0.1',
    adminPort: 0,
    adminToken: null,
    lockHeader: 'X-Lock-Type',
    lockDefault: 'foreground',
    deadLetterDir: 'data/dead-letter',
    deadLetterIndex: null,
    maxBodyBytes: 100 * 1024 * 1024,
    logLevel: 'silent',
    logFormat: 'json',
    slowLockMs: 500,
    byQueryPolicy: 'passthrough',
    upstreamTimeoutMs: 60_000,
    shutdownTimeoutMs: 30_000,
    aliasCacheTtlMs: 5000,
    ...overrides.proxy,
  };
  return Object.freeze({ zookeeper, elasticsearch, proxy, source: { configFile: null } });
}
