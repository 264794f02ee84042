import { watch, type FSWatcher } from 'node:fs';
import { dirname, basename } from 'node:path';
import type { Logger } from 'pino';
import type { ReloadDiff } from '../config/reloadable-diff.js';
import type { Settings } from '../config/settings.js';

export interface Reloadable {
  reload(next: Settings): ReloadDiff;
}

export interface SettingsWatcherOptions {
  /** Re-reads every source (file, environment, flags) the way startup did; throws ConfigError. */
  readonly reread: () => Settings;
  readonly target: Reloadable;
  readonly logger: Logger;
  /** Watched for changes besides SIGHUP; null when the proxy runs without a file. */
  readonly configFile: string | null;
  /** Other files whose change triggers a reload (the proxy port's certificate, key and CA). */
  readonly alsoWatch?: readonly string[];
  readonly signals: { on(signal: 'SIGHUP', listener: () => void): unknown; off(signal: 'SIGHUP', listener: () => void): unknown };
  /** Editors write a file in several steps; one reload after they settle. */
  readonly debounceMs?: number;
}

/**
 * Re-reads the configuration on SIGHUP and when the properties file changes. An invalid file
 * is logged and the running settings stay; keys that need a restart are logged as not applied.
 */
export function watchSettings(options: SettingsWatcherOptions): () => void {
  const { logger } = options;
  let timer: NodeJS.Timeout | undefined;
  const reload = (trigger: string): void => {
    let next: Settings;
    try {
      next = options.reread();
    } catch (error) {
      logger.error({ trigger, error: error instanceof Error ? error.message : String(error) }, 'configuration not reloaded: the running settings stay');
      return;
    }
    const diff = options.target.reload(next);
    if (diff.live.length > 0) logger.info({ trigger, applied: diff.live }, 'configuration reloaded');
    if (diff.restart.length > 0) logger.warn({ trigger, notApplied: diff.restart }, 'configuration changes that need a restart were not applied');
    if (diff.live.length === 0 && diff.restart.length === 0) logger.info({ trigger }, 'configuration re-read: no changes');
  };
  const onHangup = (): void => reload('SIGHUP');
  options.signals.on('SIGHUP', onHangup);
  const onFileChange = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => reload('file changed'), options.debounceMs ?? 200);
  };
  const files = [...(options.configFile !== null ? [options.configFile] : []), ...(options.alsoWatch ?? [])];
  const watchers = files.map((file) => watchFile(file, onFileChange));
  return () => {
    clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
    options.signals.off('SIGHUP', onHangup);
  };
}

/** Watches the directory, so a file replaced by rename (how most editors save) is still seen. */
function watchFile(file: string, onChange: () => void): FSWatcher {
  const name = basename(file);
  const watcher = watch(dirname(file), (_event, changed) => {
    if (changed === null || changed === name) onChange();
  });
  watcher.unref();
  return watcher;
}
