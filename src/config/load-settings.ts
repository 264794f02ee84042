import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from './config-error.js';
import { CONFIG_KEY_NAMES, CONFIG_KEYS, ZOOKEEPER_ONLY_KEYS, type ConfigKey, type ConfigValues, type ValueOf } from './config-keys.js';
import { buildSettings } from './build-settings.js';
import { defaultsLayer, environmentLayer, fileLayer, flagLayer, type Environment, type SourceLayer } from './config-sources.js';
import { checkAcrossKeys } from './cross-checks.js';
import { describeFileError } from './file-errors.js';
import { invalidSetting, type RawSetting } from './raw-setting.js';
import type { Settings } from './settings.js';
import { InvalidValue } from './value-parsers.js';

export interface LoadSettingsOptions {
  /** Properties file to read; null uses defaults, environment and flags only (tests, tools). */
  readonly configFile: string | null;
  readonly env: Environment;
  /** `--set` arguments, each `key=value`. */
  readonly flags: readonly string[];
  /** Base of a relative `configFile`; the process's working directory when omitted. */
  readonly cwd?: string;
  /**
   * Whether files named by keys (CA, listener certificate and key) are opened and checked; default
   * true. False only to merge values that were already checked, so that a file replaced since
   * cannot make the merge throw: the part that uses the file reads it again and handles it then.
   */
  readonly checkFiles?: boolean;
}

/**
 * Layers defaults < file < environment < flags, validates every key and the rules across
 * keys, and returns one deep-frozen `Settings`. Warnings (unknown or repeated keys) are in
 * `settings.source.warnings` for the caller to log. Any mistake throws a one-line `ConfigError`.
 */
export function loadSettings(options: LoadSettingsOptions): Settings {
  const configFile = options.configFile === null ? null : resolve(options.cwd ?? process.cwd(), options.configFile);
  const layers = [
    defaultsLayer(),
    ...(configFile === null ? [] : [fileLayer(readConfigFile(configFile), configFile)]),
    environmentLayer(options.env),
    flagLayer(options.flags),
  ];
  const effective = mergeLayers(layers);
  const lockService = validatedValue('proxy.lock.service', requireSetting(effective, 'proxy.lock.service'));
  const ignored = new Set<ConfigKey>(lockService === 'in-process' ? ZOOKEEPER_ONLY_KEYS : []);
  // Ignored keys keep their defaults: the Settings shape stays complete, and nothing reads them.
  const settingOf = (key: ConfigKey): RawSetting => (ignored.has(key) ? defaultSetting(key) : requireSetting(effective, key));
  const value = validatedValues(settingOf);
  const crossWarnings = checkAcrossKeys(value, settingOf, { checkFiles: options.checkFiles ?? true });
  const warnings = [...layers.flatMap((layer) => layer.warnings), ...ignoredKeysNote(effective, ignored), ...crossWarnings];
  return buildSettings(value, { configFile, warnings });
}

function defaultSetting(key: ConfigKey): RawSetting {
  return { key, name: key, raw: CONFIG_KEYS[key].defaultValue, origin: 'default' };
}

/** One line naming the ignored keys that were given another value than their default. */
function ignoredKeysNote(effective: ReadonlyMap<ConfigKey, RawSetting>, ignored: ReadonlySet<ConfigKey>): string[] {
  const set = [...ignored]
    .map((key) => requireSetting(effective, key))
    .filter((setting) => setting.raw.trim() !== CONFIG_KEYS[setting.key].defaultValue);
  if (set.length === 0) return [];
  const names = set.map((setting) => setting.name).join(', ');
  return [`proxy.lock.service=in-process: ${names} ignored (they configure ZooKeeper, which this mode does not use)`];
}

function readConfigFile(path: string): string {
  try {
    if (statSync(path).isDirectory()) throw new ConfigError(`${path}: cannot read config file (EISDIR: is a directory)`);
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`${path}: cannot read config file (${describeFileError(error)})`, { cause: error });
  }
}

function mergeLayers(layers: readonly SourceLayer[]): ReadonlyMap<ConfigKey, RawSetting> {
  const merged = new Map<ConfigKey, RawSetting>();
  for (const layer of layers) {
    for (const [key, setting] of layer.settings) merged.set(key, setting);
  }
  return merged;
}

function requireSetting(effective: ReadonlyMap<ConfigKey, RawSetting>, key: ConfigKey): RawSetting {
  const setting = effective.get(key);
  if (setting === undefined) throw new Error(`no value for ${key}: the defaults layer must cover every key`);
  return setting;
}

/**
 * A typed getter over the effective raw values. Every key is parsed once up front, in file
 * order, so the first mistake is the one reported; later reads re-parse (pure and cheap)
 * instead of storing untyped results that would need a cast to read back.
 */
function validatedValues(settingOf: (key: ConfigKey) => RawSetting): ValueOf {
  const value: ValueOf = (key) => validatedValue(key, settingOf(key));
  for (const key of CONFIG_KEY_NAMES) value(key);
  return value;
}

function validatedValue<K extends ConfigKey>(key: K, setting: RawSetting): ConfigValues[K] {
  try {
    return CONFIG_KEYS[key].parse(setting.raw);
  } catch (error) {
    if (error instanceof InvalidValue) throw invalidSetting(setting, error.expected);
    throw error;
  }
}
