import { ConfigError } from './config-error.js';
import { specOf, type ConfigKey } from './config-keys.js';

/** One key's raw text and where it came from, kept so errors can name what the user wrote. */
export interface RawSetting {
  readonly key: ConfigKey;
  /** The spelling the user wrote: a file or flag key (alias included), or an environment name. */
  readonly name: string;
  readonly raw: string;
  /** `default`, `<file>:<line>`, `environment` or `--set`. */
  readonly origin: string;
}

export const REDACTED = '[redacted]';

/** `name=value: expected ...`, the one-line shape of every configuration error. */
export function invalidSetting(setting: RawSetting, expected: string): ConfigError {
  return new ConfigError(`${setting.name}=${displayValue(setting)}: expected ${expected}`, {
    meta: { key: setting.key, origin: setting.origin },
  });
}

export function displayValue(setting: Pick<RawSetting, 'key' | 'raw'>): string {
  if (specOf(setting.key).secret && setting.raw !== '') return REDACTED;
  return needsQuotes(setting.raw) ? JSON.stringify(setting.raw) : setting.raw;
}

function needsQuotes(raw: string): boolean {
  return raw === '' || /[\s"]/.test(raw) || [...raw].some(isControlCharacter);
}

function isControlCharacter(char: string): boolean {
  const code = char.charCodeAt(0);
  return code < 0x20 || code === 0x7f;
}
