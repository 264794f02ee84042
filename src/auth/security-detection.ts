import type { UpstreamForwarder } from '../elasticsearch/upstream-forwarder.js';
import { AUTHENTICATE_PATH } from './cluster-authentication.js';

export type ClusterSecurity = 'on' | 'off';

/**
 * Whether the cluster authenticates requests, for `proxy.auth.verify=auto`: `_authenticate`
 * without credentials answers 401 (security on), 200 with the anonymous user (security on,
 * anonymous access enabled), or something else when security is off (its REST handlers refuse:
 * x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/rest/action/SecurityBaseRestHandler.java).
 * Known once asked; a cluster that could not be reached is asked again by the next write.
 */
export class SecurityDetection {
  private known: ClusterSecurity | null = null;
  private asking: Promise<ClusterSecurity> | null = null;

  constructor(private readonly forwarder: UpstreamForwarder) {}

  /** The last answer, or null before one arrived (or after `forget`). */
  get state(): ClusterSecurity | null {
    return this.known;
  }

  /** The cluster's answer, asked once at a time; rejects as the forwarder does when it cannot be reached. */
  detect(): Promise<ClusterSecurity> {
    if (this.known !== null) return Promise.resolve(this.known);
    this.asking ??= this.probe().finally(() => (this.asking = null));
    return this.asking;
  }

  /** The cluster's configuration may have changed (a reload): ask again. */
  forget(): void {
    this.known = null;
  }

  private async probe(): Promise<ClusterSecurity> {
    const answer = await this.forwarder.exchange({ method: 'GET', url: AUTHENTICATE_PATH, rawHeaders: [], body: Buffer.alloc(0) });
    const security: ClusterSecurity = answer.status === 401 || answer.status === 200 ? 'on' : 'off';
    this.known = security;
    return security;
  }
}
