import type { StandInSecurityOptions } from '../test/support/es-stand-in.js';

/** The secured stand-in of the `auth-flood` workload: the proxy's own user and the writers. */
export const BENCH_SECURITY: StandInSecurityOptions = {
  users: {
    proxy: { password: 'proxy-secret', roles: ['superuser'] },
    writer: { password: 'writer-secret', roles: ['superuser'] },
  },
};

export const BENCH_PROXY_USER = { kind: 'basic', username: 'proxy', password: 'proxy-secret' } as const;

export function basicAuthorization(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}
