import type { IncomingHttpHeaders } from 'node:http';
import type { UpstreamForwarder, UpstreamResponse } from '../elasticsearch/upstream-forwarder.js';
import { principalOf, type Principal } from './principal.js';

/**
 * The cluster's verdict on a set of credentials: who they are, its own 401, or some other answer
 * (a cluster that cannot authenticate right now) which is relayed as it came and never cached.
 */
export type CredentialVerdict =
  | { readonly kind: 'authenticated'; readonly principal: Principal }
  | { readonly kind: 'refused'; readonly answer: UpstreamResponse }
  | { readonly kind: 'unanswered'; readonly answer: UpstreamResponse };

/** Elasticsearch: x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/rest/action/RestAuthenticateAction.java */
export const AUTHENTICATE_PATH = '/_security/_authenticate';

/**
 * The request headers that decide who a request is: the credentials, and run-as, which makes
 * Elasticsearch act as (and `_authenticate` answer for) another user.
 * Elasticsearch: x-pack/plugin/core/src/main/java/org/elasticsearch/xpack/core/security/authc/AuthenticationServiceField.java (RUN_AS_USER_HEADER)
 */
const CREDENTIAL_HEADERS = ['authorization', 'es-security-runas-user'] as const;

/** The values of the credential headers, in a fixed order (`''` when absent): the cache key's input. */
export function credentialsOf(headers: IncomingHttpHeaders): string[] {
  return CREDENTIAL_HEADERS.map((name) => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(', ') : (value ?? '');
  });
}

/** Asks the cluster who `credentials` (from `credentialsOf`) are. Rejects as the forwarder does when the cluster cannot be reached. */
export async function askCluster(forwarder: UpstreamForwarder, credentials: readonly string[]): Promise<CredentialVerdict> {
  const rawHeaders: string[] = [];
  CREDENTIAL_HEADERS.forEach((name, n) => {
    const value = credentials[n];
    if (value !== undefined && value !== '') rawHeaders.push(name, value);
  });
  const answer = await forwarder.exchange({ method: 'GET', url: AUTHENTICATE_PATH, rawHeaders, body: EMPTY });
  if (answer.status === 401) return { kind: 'refused', answer };
  const principal = answer.status === 200 ? principalOf(answer.body) : null;
  return principal === null ? { kind: 'unanswered', answer } : { kind: 'authenticated', principal };
}

const EMPTY = Buffer.alloc(0);
