import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import type { UpstreamForwarder } from '../elasticsearch/upstream-forwarder.js';
import type { WritePrincipals } from './admitted-write-path.js';
import { AuthenticationCache } from './authentication-cache.js';
import { askCluster } from './cluster-authentication.js';
import type { PrincipalMetrics } from './principal-metrics.js';
import { PrincipalShare } from './principal-share.js';
import { SecurityDetection } from './security-detection.js';
import { createKnownRefusal, type KnownRefusal } from './known-refusal.js';
import { createWriteAdmission, type WriteAdmission } from './write-admission.js';
import { PrivilegeCheck } from './write-privileges.js';
import { RefusalThrottle } from './refusal-throttle.js';

export interface AuthGate {
  readonly admission: WriteAdmission;
  readonly principals: WritePrincipals;
  /** Answered from the request head: credentials the cluster refused a moment ago. */
  readonly knownRefusal: KnownRefusal;
  /** Start and reload: with `proxy.auth.verify=auto`, asks the cluster (again) whether it has security on. */
  detectSecurity(): void;
  /** Shutdown: refusals held back by the throttle are answered now. */
  stop(): void;
}

export interface AuthGateDeps {
  readonly settings: () => Settings;
  readonly forwarder: UpstreamForwarder;
  readonly metrics: PrincipalMetrics;
  readonly logger: Logger;
}

/** The checks before a write's locks, assembled: the cluster's verdicts and their cache, foreground rights, shares. */
export function createAuthGate(deps: AuthGateDeps): AuthGate {
  const { settings, forwarder, metrics, logger } = deps;
  const initial = settings().proxy.auth;
  const verdicts = new AuthenticationCache({
    ask: (credentials) => askCluster(forwarder, credentials),
    size: initial.cacheSize,
    ttlMs: () => settings().proxy.auth.cacheTtlMs,
    refusalTtlMs: () => settings().proxy.auth.refusalTtlMs,
  });
  const security = new SecurityDetection(forwarder);
  const throttle = new RefusalThrottle(() => settings().proxy.auth.refusalThrottle, { throttled: (treatment) => metrics.refusalThrottled(treatment) });
  const admission = createWriteAdmission({
    settings,
    verdicts,
    security,
    share: new PrincipalShare(),
    privileges: new PrivilegeCheck(forwarder, initial.cacheSize, () => settings().proxy.auth.cacheTtlMs),
    throttle,
    events: {
      credentialChecked: (result, cached) => metrics.credentialChecked(result, cached),
      foregroundDenied: (principal, action, requestId) => {
        metrics.foregroundDenied(principal, action);
        logger.info({ requestId, principal, action }, 'foreground write from a principal not allowed to write in the foreground');
      },
      shareExceeded: (principal, requestId) => {
        metrics.shareExceeded(principal);
        logger.info({ requestId, principal }, 'write refused: its principal has its share of locked writes in flight');
      },
    },
  });
  return {
    admission,
    principals: metrics,
    knownRefusal: createKnownRefusal({ settings, verdicts, security, throttle, refused: () => metrics.credentialChecked('refused', true) }),
    stop: () => throttle.stop(),
    detectSecurity() {
      security.forget();
      if (settings().proxy.auth.verify !== 'auto') return;
      security.detect().then(
        (state) => logger.info({ security: state }, `cluster security is ${state}: credential checks ${state === 'on' ? 'on' : 'off'} (proxy.auth.verify=auto)`),
        (error: unknown) => logger.warn({ err: error }, 'cluster security not detected yet: the next write asks again (proxy.auth.verify=auto)'),
      );
    },
  };
}
