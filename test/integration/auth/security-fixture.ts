import type { StandInSecurityOptions } from '../../support/es-stand-in.js';
import type { TestSettingsOverrides } from '../../support/test-settings.js';
import type { AuthSettings } from '../../../src/auth/auth-settings.js';
import { testSettings } from '../../support/test-settings.js';

/** A cluster with security on: the proxy's own user, writers with roles, API keys, a token. */
export const SECURITY: StandInSecurityOptions = {
  users: {
    proxy: { password: 'proxy-secret', roles: ['superuser'] },
    alice: { password: 'alice-secret', roles: ['writer', 'interactive'] },
    batch: { password: 'batch-secret', roles: ['writer'] },
    reader: { password: 'reader-secret', roles: ['viewer'] },
  },
  apiKeys: { 'key-1': { key: 'key-1-secret', name: 'ingest', owner: 'batch' } },
  tokens: { 'token-of-alice': 'alice' },
  roles: {
    writer: [{ names: ['*'], privileges: ['write', 'read'] }],
    viewer: [{ names: ['*'], privileges: ['read'] }],
  },
};

export function basic(user: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

export function apiKey(id: string, key: string): Record<string, string> {
  return { authorization: `ApiKey ${Buffer.from(`${id}:${key}`).toString('base64')}` };
}

export const ALICE = basic('alice', 'alice-secret');
export const BATCH = basic('batch', 'batch-secret');
export const WRONG_PASSWORD = basic('alice', 'not-her-password');

/** Settings for a proxy in front of `SECURITY`: its own calls as `proxy`, credential checks as `auth` says. */
export function securedSettings(auth: Partial<AuthSettings>, more: TestSettingsOverrides = {}): TestSettingsOverrides {
  const defaults = testSettings().proxy.auth;
  return {
    ...more,
    // The document node stays for ZooKeeper's reaper: a release is then over once its lock node is deleted.
    zookeeper: { documentCleanup: 'reaper', ...more.zookeeper },
    elasticsearch: { auth: { kind: 'basic', username: 'proxy', password: 'proxy-secret' }, ...more.elasticsearch },
    proxy: { ...more.proxy, auth: { ...defaults, verify: 'on', ...auth } },
  };
}
