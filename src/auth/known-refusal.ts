import type { IncomingMessage } from 'node:http';
import type { Settings } from '../config/settings.js';
import type { WriteRoute } from '../write/write-request.js';
import type { AuthenticationCache } from './authentication-cache.js';
import { credentialsOf } from './cluster-authentication.js';
import { refusalAnswerFor, type RefusalAnswer } from './refusal-answer.js';
import type { RefusalThrottle } from './refusal-throttle.js';
import type { SecurityDetection } from './security-detection.js';

/** The cluster's 401 for a write, and how it is answered on its connection (refusal-throttle.ts). */
export interface ThrottledRefusal {
  readonly answer: RefusalAnswer;
  /** Resolves when the answer may be written (at once, or after the throttle's delay). */
  readonly answerable: Promise<void>;
  /** Close the connection after the answer. */
  readonly close: boolean;
}

/**
 * The cluster's 401 for a write whose credentials it refused a moment ago (the verdict cache),
 * decided from the request head alone: null when the write has to be checked (or not at all).
 */
export type KnownRefusal = (route: WriteRoute, req: IncomingMessage) => ThrottledRefusal | null;

export interface KnownRefusalDeps {
  readonly settings: () => Settings;
  readonly verdicts: AuthenticationCache;
  readonly security: SecurityDetection;
  readonly throttle: RefusalThrottle;
  /** A refusal answered from the cache. */
  refused(): void;
}

/**
 * Elasticsearch authenticates a request from its head, before it reads the body (its HTTP
 * transport validates the headers first:
 * modules/transport-netty4/src/main/java/org/elasticsearch/http/netty4/Netty4HttpHeaderValidator.java,
 * the validator from x-pack/plugin/security/src/main/java/org/elasticsearch/xpack/security/Security.java),
 * so a client it refuses costs it no body. This does the same for the writes that lock, once the
 * cluster's refusal of these credentials (no credentials, where the cluster has no anonymous
 * user, included) is in the verdict cache: nothing of the body is read, inflated or parsed.
 */
export function createKnownRefusal(deps: KnownRefusalDeps): KnownRefusal {
  return (route, req) => {
    if (route.kind !== 'single' && route.kind !== 'bulk') return null;
    if (!checksCredentialsNow(deps)) return null;
    const verdict = deps.verdicts.knownVerdict(credentialsOf(req.headers));
    if (verdict?.kind !== 'refused') return null;
    deps.refused();
    const treatment = deps.throttle.refused(req.socket);
    return { answer: refusalAnswerFor(req.url ?? '/', verdict.answer), answerable: deps.throttle.delay(req.socket, treatment), close: treatment.close };
  };
}

/** Whether credentials are checked, as far as known without asking the cluster. */
function checksCredentialsNow(deps: KnownRefusalDeps): boolean {
  switch (deps.settings().proxy.auth.verify) {
    case 'off':
      return false;
    case 'on':
      return true;
    case 'auto':
      return deps.security.state === 'on';
  }
}
