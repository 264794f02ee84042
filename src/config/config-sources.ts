import { ConfigError } from './config-error.js';
import { CONFIG_KEY_NAMES, canonicalKeyOf, envNameOf, ENV_PREFIX, specOf, type ConfigKey } from './config-keys.js';
import { parseProperties } from './properties-parser.js';
import { displayValue, type RawSetting } from './raw-setting.js';

/** The keys one source sets, plus its non-fatal findings. */
export interface SourceLayer {
  readonly settings: ReadonlyMap<ConfigKey, RawSetting>;
  readonly warnings: readonly string[];
}

export type Environment = Readonly<Record<string, string | undefined>>;

export function defaultsLayer(): SourceLayer {
  const settings = new Map<ConfigKey, RawSetting>();
  for (const key of CONFIG_KEY_NAMES) {
    settings.set(key, { key, name: key, raw: specOf(key).defaultValue, origin: 'default' });
  }
  return { settings, warnings: [] };
}

/**
 * A properties file. As in Java the last of repeated keys wins (with a warning); a key written
 * under two spellings with different values is an error, since neither can be meant to win.
 */
export function fileLayer(text: string, fileName: string): SourceLayer {
  const settings = new Map<ConfigKey, RawSetting>();
  const warnings: string[] = [];
  for (const entry of parseProperties(text, fileName)) {
    const origin = `${fileName}:${entry.line}`;
    const key = canonicalKeyOf(entry.key);
    if (key === null) {
      warnings.push(`${origin}: unknown key "${entry.key}" ignored`);
      continue;
    }
    const setting = { key, name: entry.key, raw: entry.value, origin };
    const earlier = settings.get(key);
    if (earlier !== undefined) checkRepeat(earlier, setting, warnings);
    settings.set(key, setting);
  }
  return { settings, warnings };
}

function checkRepeat(earlier: RawSetting, later: RawSetting, warnings: string[]): void {
  if (earlier.name === later.name) {
    warnings.push(`${later.origin}: "${later.name}" repeats ${earlier.origin}; the later value wins`);
  } else if (earlier.raw !== later.raw) {
    throw conflictingSpellings(later, earlier);
  }
}

function conflictingSpellings(setting: RawSetting, other: RawSetting): ConfigError {
  return new ConfigError(
    `${setting.name}=${displayValue(setting)}: expected one spelling per key, but ${other.name}=${displayValue(other)} is also set (${other.origin})`,
    { meta: { key: setting.key, origin: setting.origin } },
  );
}

/**
 * `ES_LOCK_PROXY_<KEY>` for the canonical key and each alias, then generic names such as
 * `LOG_LEVEL` below them. Unknown `ES_LOCK_PROXY_*` names warn: they are almost always typos.
 */
export function environmentLayer(env: Environment): SourceLayer {
  const settings = new Map<ConfigKey, RawSetting>();
  const known = new Set<string>();
  for (const key of CONFIG_KEY_NAMES) {
    const spec = specOf(key);
    const names = [key, ...spec.aliases].map(envNameOf);
    names.forEach((name) => known.add(name));
    const found = pickEnvironmentValue(key, names, env) ?? pickGenericValue(key, spec.envAliases, env);
    if (found !== null) settings.set(key, found);
  }
  const warnings = Object.keys(env)
    .filter((name) => name.startsWith(ENV_PREFIX) && !known.has(name) && env[name] !== undefined)
    .map((name) => `environment: unknown variable ${name} ignored`);
  return { settings, warnings };
}

function pickEnvironmentValue(key: ConfigKey, names: readonly string[], env: Environment): RawSetting | null {
  const present = names.flatMap((name) => {
    const raw = env[name];
    return raw === undefined ? [] : [{ key, name, raw, origin: 'environment' }];
  });
  const [first, ...rest] = present;
  const different = rest.find((other) => other.raw !== first?.raw);
  if (first !== undefined && different !== undefined) throw conflictingSpellings(different, first);
  return first ?? null;
}

/** Generic names (LOG_LEVEL) are often exported empty by shells and compose files: empty = unset. */
function pickGenericValue(key: ConfigKey, names: readonly string[], env: Environment): RawSetting | null {
  for (const name of names) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') return { key, name, raw, origin: 'environment' };
  }
  return null;
}

/** `--set key=value` arguments, in order; a later one wins as usual on a command line. */
export function flagLayer(flags: readonly string[]): SourceLayer {
  const settings = new Map<ConfigKey, RawSetting>();
  const warnings: string[] = [];
  for (const flag of flags) {
    const equals = flag.indexOf('=');
    if (equals <= 0) throw new ConfigError(`--set ${flag}: expected key=value`);
    const name = flag.slice(0, equals).trim();
    const key = canonicalKeyOf(name);
    if (key === null) {
      warnings.push(`--set: unknown key "${name}" ignored`);
      continue;
    }
    settings.set(key, { key, name, raw: flag.slice(equals + 1), origin: '--set' });
  }
  return { settings, warnings };
}
