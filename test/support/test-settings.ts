import { loadSettings } from '../../src/config/load-settings.js';
import type { ElasticsearchSettings, LockSettings, ProxySettings, Settings, ZooKeeperSettings } from '../../src/config/settings.js';

/** Per-section overrides; `elasticsearch.hosts` also takes URL strings. */
export interface TestSettingsOverrides {
  readonly zookeeper?: Partial<ZooKeeperSettings>;
  readonly lock?: Partial<LockSettings>;
  readonly elasticsearch?: Partial<Omit<ElasticsearchSettings, 'hosts'>> & { readonly hosts?: readonly (URL | string)[] };
  readonly proxy?: Partial<ProxySettings>;
}

/**
 * The product's own defaults (from the key registry, so tests cannot drift from them), except that
 * both listeners bind port 0 on loopback (the running proxy reports the ports it got), logs are
 * silent, and credential checks are off (a test of them turns them on, so that no other test's
 * request log or injected fault meets the proxy's own security probe).
 */
const TEST_DEFAULTS: Settings = loadSettings({
  configFile: null,
  env: {},
  flags: ['proxy.listen.port=0', 'proxy.admin.port=0', 'proxy.log.level=silent', 'proxy.auth.verify=off'],
});

export function testSettings(overrides: TestSettingsOverrides = {}): Settings {
  const { hosts, ...elasticsearchRest } = overrides.elasticsearch ?? {};
  return Object.freeze({
    zookeeper: { ...TEST_DEFAULTS.zookeeper, ...overrides.zookeeper },
    lock: { ...TEST_DEFAULTS.lock, ...overrides.lock },
    elasticsearch: {
      ...TEST_DEFAULTS.elasticsearch,
      ...elasticsearchRest,
      hosts: hosts === undefined ? TEST_DEFAULTS.elasticsearch.hosts : hosts.map((host) => (typeof host === 'string' ? new URL(host) : host)),
    },
    proxy: { ...TEST_DEFAULTS.proxy, ...overrides.proxy },
    source: { configFile: null },
  });
}
