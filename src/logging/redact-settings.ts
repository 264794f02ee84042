import { CONFIG_KEY_NAMES, specOf, type ConfigKey } from '../config/config-keys.js';
import type { Settings } from '../config/settings.js';
import { settingsToProperties } from '../config/settings-to-properties.js';
import { REDACTED } from './logger.js';

/**
 * The effective settings as properties keys, safe to log: secrets replaced by "[redacted]",
 * the ZooKeeper digest user kept (operators need to know which identity is used) but not its
 * password, user info stripped from cluster URLs, unset (and ignored) keys as null.
 */
export function redactSettings(settings: Settings): Record<ConfigKey, string | null> {
  const properties = settingsToProperties(settings);
  const redacted = Object.fromEntries(
    CONFIG_KEY_NAMES.map((key) => [key, redactValue(key, properties[key], settings)]),
  );
  return { ...properties, ...redacted };
}

function redactValue(key: ConfigKey, raw: string, settings: Settings): string | null {
  if (raw === '') return null;
  // In-process locks read none of the ZooKeeper keys: showing their defaults would suggest otherwise.
  if (settings.proxy.lockService === 'in-process' && specOf(key).zookeeperOnly) return null;
  if (key === 'zookeeper.auth') return redactDigest(settings.zookeeper.auth?.credentials ?? '');
  if (key === 'elasticsearch.hosts') return settings.elasticsearch.hosts.map(redactUrl).join(',');
  return specOf(key).secret ? REDACTED : raw;
}

function redactDigest(credentials: string): string {
  const user = credentials.slice(0, Math.max(0, credentials.indexOf(':')));
  return `digest:${user}:${REDACTED}`;
}

/** A URL without user name and password, for logs and the startup line. */
export function redactUrl(url: URL): string {
  if (url.username === '' && url.password === '') return url.href;
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  return copy.href;
}
