import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/config/config-error.js';
import { loadSettings, type LoadSettingsOptions } from '../../../src/config/load-settings.js';

/** A temp directory for properties files, removed by `cleanup()` (call it in afterEach/afterAll). */
export function tempConfigDir(): { dir: string; write(name: string, text: string): string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'es-lock-proxy-config-'));
  return {
    dir,
    write: (name, text) => {
      const file = join(dir, name);
      writeFileSync(file, text, 'utf8');
      return file;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function load(options: Partial<LoadSettingsOptions> = {}) {
  return loadSettings({ configFile: null, env: {}, flags: [], ...options });
}

/** The ConfigError message of a load that must fail; fails the test if the load succeeds. */
export function configErrorOf(options: Partial<LoadSettingsOptions>): string {
  try {
    load(options);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError, but the settings loaded');
}
