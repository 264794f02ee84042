import { loadSettings } from './load-settings.js';
import { reloadableDiff, type ReloadDiff } from './reloadable-diff.js';
import type { Settings } from './settings.js';
import { settingsToProperties } from './settings-to-properties.js';

export interface LiveUpdate {
  /** The running settings with the live keys of `next` applied and every restart key kept. */
  readonly settings: Settings;
  readonly diff: ReloadDiff;
}

/**
 * What a running proxy can take from a re-read file: timeouts, retry count, log level and the
 * slow-lock threshold change for new requests; keys that need a restart keep their running
 * value (so the settings object never claims a port or server it is not using).
 */
export function applyLiveChanges(running: Settings, next: Settings): LiveUpdate {
  const diff = reloadableDiff(running, next);
  const properties = settingsToProperties(running);
  const wanted = settingsToProperties(next);
  for (const change of diff.live) properties[change.key] = wanted[change.key];
  const merged = loadSettings({
    configFile: null,
    env: {},
    flags: Object.entries(properties).map(([key, value]) => `${key}=${value}`),
    // Both sides were checked when they were loaded; a file replaced since must not make this throw.
    checkFiles: false,
  });
  return { settings: Object.freeze({ ...merged, source: running.source }), diff };
}
