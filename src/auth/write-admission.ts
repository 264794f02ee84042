import { parsePriority } from '../classify/priority-header.js';
import type { Settings } from '../config/settings.js';
import { ProxyError } from '../errors/proxy-error.js';
import type { Priority } from '../lock/lock-engine.js';
import { errorOutcome, type WriteOutcome } from '../write/write-outcome.js';
import type { BulkItemRefusal, WriteRequest } from '../write/write-request.js';
import type { ForegroundDenied } from './auth-settings.js';
import type { AuthenticationCache } from './authentication-cache.js';
import { credentialsOf, type CredentialVerdict } from './cluster-authentication.js';
import { mayWriteForeground } from './foreground-rights.js';
import { principalName, type Principal } from './principal.js';
import type { PrincipalShare } from './principal-share.js';
import type { SecurityDetection } from './security-detection.js';
import { refusalFor } from './refusal-answer.js';
import type { RefusalThrottle } from './refusal-throttle.js';
import type { UpstreamResponse } from '../elasticsearch/upstream-forwarder.js';
import { withTimeout } from './with-timeout.js';
import { bulkItemPrivilege, requiredPrivilege, unauthorizedAction, type PrivilegeCheck } from './write-privileges.js';

/** What the admission says of a write before it may take any lock. */
export type Admission =
  | {
      readonly admitted: false;
      readonly outcome: WriteOutcome;
      /** A credential refusal the throttle closes its connection after (refusal-throttle.ts). */
      readonly closeConnection?: boolean;
    }
  | {
      readonly admitted: true;
      /** The principal's name (`principal.ts`), null when credentials are not checked. */
      readonly principal: string | null;
      /** The priority to lock with when it differs from what the request asked. */
      readonly priority: Priority | null;
      /** With `proxy.auth.privileges=on`, for a bulk: its items' authorization, asked per item. */
      readonly bulkItemRefusal: BulkItemRefusal | null;
      /** Headers to add to the write's answer. */
      readonly answerHeaders: Readonly<Record<string, string>>;
      /** The write is over: its share is given back. */
      release(): void;
    };

export type WriteAdmission = (request: WriteRequest) => Promise<Admission>;

/** What the admission reports (metrics and logs). */
export interface AdmissionEvents {
  credentialChecked(result: CredentialVerdict['kind'], cached: boolean): void;
  foregroundDenied(principal: string | null, action: ForegroundDenied, requestId: string): void;
  shareExceeded(principal: string, requestId: string): void;
}

export interface AdmissionDeps {
  readonly settings: () => Settings;
  readonly verdicts: AuthenticationCache;
  readonly security: SecurityDetection;
  readonly share: PrincipalShare;
  readonly privileges: PrivilegeCheck;
  readonly throttle: RefusalThrottle;
  readonly events: AdmissionEvents;
}

/** The header saying that a write was locked at another priority than it asked for. */
export const PRIORITY_ANSWER_HEADER = 'X-Lock-Priority';

const NOTHING_TO_RELEASE = (): void => undefined;

/**
 * Decides, before any lock, whether a write that locks may go on: who it is (the cluster's own
 * verdict, `proxy.auth.verify`), whether it may be foreground (`proxy.priority.foreground.*`),
 * and whether its principal has room (`proxy.lock.max.waiting.per.principal`). A refusal takes
 * nothing shared and sends nothing to the lock service.
 */
export function createWriteAdmission(deps: AdmissionDeps): WriteAdmission {
  return async (request) => {
    if (!locks(request)) return { admitted: true, principal: null, priority: null, bulkItemRefusal: null, answerHeaders: {}, release: NOTHING_TO_RELEASE };
    const settings = deps.settings();
    let principal: Principal | null = null;
    let bulkItemRefusal: BulkItemRefusal | null = null;
    if (await checksCredentials(deps, settings)) {
      const credentials = credentialsOf(request.req.headers);
      const { verdict, key } = await verdictFor(deps, settings, request, credentials);
      if (verdict.kind === 'refused') return throttledRefusal(deps, request, verdict.answer);
      if (verdict.kind !== 'authenticated') return { admitted: false, outcome: { kind: 'upstream', upstream: verdict.answer } };
      deps.throttle.accepted(request.req.socket);
      principal = verdict.principal;
      const refusal = await privilegeRefusal(deps, settings, request, verdict.principal, { key, credentials });
      if (refusal !== null) return { admitted: false, outcome: errorOutcome(refusal) };
      bulkItemRefusal = bulkItemRefusalFor(deps, settings, request, verdict.principal, { key, credentials });
    }
    return admitPrincipal(deps, settings, request, principal, bulkItemRefusal);
  };
}

/** The cluster's 401, once the throttle lets it be answered on its connection. */
async function throttledRefusal(deps: AdmissionDeps, request: WriteRequest, answer: UpstreamResponse): Promise<Admission> {
  const treatment = deps.throttle.refused(request.req.socket);
  await deps.throttle.delay(request.req.socket, treatment);
  return { admitted: false, outcome: { kind: 'upstream', upstream: answer }, closeConnection: treatment.close };
}

/** Writes that take a lock; the others (generated ids, by-query) meet the cluster's own checks unlocked. */
function locks(request: WriteRequest): boolean {
  return request.route.kind === 'single' || request.route.kind === 'bulk';
}

async function checksCredentials(deps: AdmissionDeps, settings: Settings): Promise<boolean> {
  switch (settings.proxy.auth.verify) {
    case 'off':
      return false;
    case 'on':
      return true;
    case 'auto':
      return (deps.security.state ?? (await deps.security.detect())) === 'on';
  }
}

async function verdictFor(
  deps: AdmissionDeps,
  settings: Settings,
  request: WriteRequest,
  credentials: readonly string[],
): Promise<{ verdict: CredentialVerdict; key: string }> {
  const { verdict, cached, key } = await withTimeout(deps.verdicts.verdictFor(credentials), settings.proxy.auth.timeoutMs, () => {
    deps.events.credentialChecked('unanswered', false);
    return checkTimedOut('credential', settings);
  });
  deps.events.credentialChecked(verdict.kind, cached);
  if (verdict.kind === 'refused') return { verdict: { kind: 'refused', answer: refusalFor(request.req.url ?? '/', verdict.answer) }, key };
  return { verdict, key };
}

/** With `proxy.auth.privileges=on`: the cluster's 403 for a single-document write its principal may not do. */
async function privilegeRefusal(
  deps: AdmissionDeps,
  settings: Settings,
  request: WriteRequest,
  principal: Principal,
  credentials: { key: string; credentials: readonly string[] },
): Promise<ProxyError | null> {
  if (settings.proxy.auth.privileges !== 'on') return null;
  const needed = requiredPrivilege(request.route);
  if (needed === null) return null;
  const check = deps.privileges.refusedAction(credentials.key, credentials.credentials, needed);
  const refused = await withTimeout(check, settings.proxy.auth.timeoutMs, () => checkTimedOut('privilege', settings));
  return refused === null ? null : unauthorizedAction(principal, needed.index, refused);
}

/**
 * With `proxy.auth.privileges=on`, for a bulk: Elasticsearch authorizes its items one by one and
 * answers those it refuses inside its 200 (AuthorizationService.java, authorizeBulkItems), so each
 * item is asked about on its own (cached per credential, index and privilege) and a refused one is
 * answered the same way, without its lock.
 */
function bulkItemRefusalFor(
  deps: AdmissionDeps,
  settings: Settings,
  request: WriteRequest,
  principal: Principal,
  credentials: { key: string; credentials: readonly string[] },
): BulkItemRefusal | null {
  if (settings.proxy.auth.privileges !== 'on' || request.route.kind !== 'bulk') return null;
  return async (index, action) => {
    const needed = bulkItemPrivilege(index, action);
    const check = deps.privileges.refusedAction(credentials.key, credentials.credentials, needed);
    const refused = await withTimeout(check, settings.proxy.auth.timeoutMs, () => checkTimedOut('privilege', settings));
    return refused === null ? null : unauthorizedAction(principal, index, refused);
  };
}

function checkTimedOut(what: string, settings: Settings): ProxyError {
  return new ProxyError('UPSTREAM_TIMEOUT', `the cluster did not answer the ${what} check within ${settings.proxy.auth.timeoutMs}ms (proxy.auth.timeout.ms)`);
}

function admitPrincipal(deps: AdmissionDeps, settings: Settings, request: WriteRequest, principal: Principal | null, bulkItemRefusal: BulkItemRefusal | null): Admission {
  const { lockHeader, lockDefault, auth } = settings.proxy;
  const name = principal === null ? null : principalName(principal);
  const asked = parsePriority(request.req.headers[lockHeader.toLowerCase()], lockDefault, lockHeader);
  let priority: Priority | null = null;
  if (asked === 'foreground' && !mayWriteForeground(auth.foregroundAllow, principal)) {
    deps.events.foregroundDenied(name, auth.foregroundDenied, request.requestId);
    if (auth.foregroundDenied === 'reject') return { admitted: false, outcome: errorOutcome(foregroundRefused(name)) };
    priority = 'background';
  }
  const release = name === null ? NOTHING_TO_RELEASE : deps.share.enter(name, auth.maxWaitingPerPrincipal);
  if (release === null) {
    deps.events.shareExceeded(name ?? '', request.requestId);
    return { admitted: false, outcome: errorOutcome(shareExceeded(name ?? '', auth.maxWaitingPerPrincipal), { retryAfterSeconds: 1 }) };
  }
  const answerHeaders: Record<string, string> = priority === null ? {} : { [PRIORITY_ANSWER_HEADER]: priority };
  return { admitted: true, principal: name, priority, bulkItemRefusal, answerHeaders, release };
}

function foregroundRefused(name: string | null): ProxyError {
  const who = name === null ? 'a client whose credentials are not checked' : `[${name}]`;
  return new ProxyError('FOREGROUND_NOT_ALLOWED', `foreground writes are not allowed for ${who} (proxy.priority.foreground.allow)`);
}

function shareExceeded(name: string, max: number): ProxyError {
  return new ProxyError(
    'PRINCIPAL_SHARE_EXCEEDED',
    `[${name}] already has ${max} writes waiting for or holding locks in this proxy (proxy.lock.max.waiting.per.principal); retry later`,
  );
}
