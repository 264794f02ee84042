import { expect, vi } from 'vitest';
import type { StandInSecurityOptions } from '../../support/es-stand-in.js';
import type { WriteStack } from '../../support/write-stack.js';
import { ZK_OP, type ZkWireTap } from '../../support/zk-wire-tap.js';
import { BACKGROUND, send } from '../write/write-client.js';
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
    scoped: { password: 'scoped-secret', roles: ['scoped-writer'] },
    legacy: { password: 'legacy-secret', roles: ['legacy-creator'] },
    creator: { password: 'creator-secret', roles: ['doc-creator'] },
  },
  apiKeys: { 'key-1': { key: 'key-1-secret', name: 'ingest', owner: 'batch' } },
  tokens: { 'token-of-alice': 'alice' },
  roles: {
    writer: [{ names: ['*'], privileges: ['write', 'read'] }],
    viewer: [{ names: ['*'], privileges: ['read'] }],
    'scoped-writer': [{ names: ['allowed-*'], privileges: ['write'] }],
    // The deprecated `create` grants indices:data/write/index*, so index writes too; `create_doc` only creates.
    'legacy-creator': [{ names: ['*'], privileges: ['create'] }],
    'doc-creator': [{ names: ['*'], privileges: ['create_doc'] }],
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

/** Every request that creates a lock node: what a write that takes a lock cannot do without. */
export function lockCreates(tap: ZkWireTap): number {
  return tap.count(ZK_OP.create) + tap.count(ZK_OP.create2) + tap.count(ZK_OP.createContainer) + tap.count(ZK_OP.multi);
}

/**
 * A first authenticated write, once its lock is given back: the lock service's start-up nodes are
 * created by then and the release (a transaction) is over, so what is counted after is the test's.
 */
export async function warmUp(stack: WriteStack, tap?: ZkWireTap): Promise<void> {
  tap?.resetCounts();
  expect((await send(stack.urls[0]!, 'PUT', '/warm-up/_doc/1', { n: 0 }, { ...BACKGROUND, ...ALICE })).status).toBe(201);
  // Its acquisition and its release: a transaction each (or a delete for the release).
  if (tap !== undefined) await vi.waitFor(() => expect(tap.count(ZK_OP.multi) + tap.count(ZK_OP.delete)).toBeGreaterThanOrEqual(2));
}

