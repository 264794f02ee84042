import { loadSettings } from '../config/load-settings.js';
import type { Settings } from '../config/settings.js';
import type { CliContext } from './cli-context.js';

export const DEFAULT_CONFIG_FILE = 'config/elasticsearch-details.properties';

/** The options every command that reads the configuration takes (parseArgs shape). */
export const SETTINGS_OPTIONS = {
  config: { type: 'string', short: 'c' },
  set: { type: 'string', short: 's', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;

/** A loader re-reading the same sources each time (start uses it again on SIGHUP). */
export function settingsLoader(values: { config?: string; set?: string[] }, context: CliContext): () => Settings {
  return () =>
    loadSettings({
      configFile: values.config ?? DEFAULT_CONFIG_FILE,
      env: context.env,
      flags: values.set ?? [],
      cwd: context.cwd,
    });
}
