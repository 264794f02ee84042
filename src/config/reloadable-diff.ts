import { CONFIG_KEY_NAMES, specOf, type ConfigKey } from './config-keys.js';
import { displayValue } from './raw-setting.js';
import type { Settings } from './settings.js';
import { settingsToProperties } from './settings-to-properties.js';

export interface KeyChange {
  readonly key: ConfigKey;
  /** Properties-file text, secrets shown as "[redacted]", so a change can be logged as is. */
  readonly from: string;
  readonly to: string;
}

export interface ReloadDiff {
  /** Changes a running proxy applies to new requests (timeouts, retry count, log level, slow-lock threshold). */
  readonly live: readonly KeyChange[];
  /** Changes that only take effect after a restart (ports, hosts, ZooKeeper, lock root, prefixes, auth). */
  readonly restart: readonly KeyChange[];
}

/** Which keys changed between two loads, split by whether they can be applied without a restart. */
export function reloadableDiff(old: Settings, next: Settings): ReloadDiff {
  const before = settingsToProperties(old);
  const after = settingsToProperties(next);
  const changes = CONFIG_KEY_NAMES.filter((key) => before[key] !== after[key]).map((key) => ({
    key,
    from: displayValue({ key, raw: before[key] }),
    to: displayValue({ key, raw: after[key] }),
  }));
  return {
    live: changes.filter((change) => specOf(change.key).reload === 'live'),
    restart: changes.filter((change) => specOf(change.key).reload === 'restart'),
  };
}
