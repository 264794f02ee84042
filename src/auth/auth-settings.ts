/** `auto`: on when the cluster has security on (detected at start and on reload). */
export type AuthVerifyMode = 'auto' | 'on' | 'off';

/** What a foreground write from someone outside `proxy.priority.foreground.allow` becomes. */
export type ForegroundDenied = 'background' | 'reject';

/**
 * What repeated credential refusals on one connection cost their client (refusal-throttle.ts):
 * the first `delayAfter` in a row are answered at once, each further one after a delay starting
 * at `delayMs` and doubling up to `delayMaxMs` (0: no delays), and the connection is closed after
 * the answer to the `closeAfter`-th (0: never).
 */
export interface RefusalThrottleSettings {
  readonly delayAfter: number;
  readonly delayMs: number;
  readonly delayMaxMs: number;
  readonly closeAfter: number;
}

export interface AuthSettings {
  readonly verify: AuthVerifyMode;
  /** Longest wait for the cluster's answer to one credential check. */
  readonly timeoutMs: number;
  readonly cacheSize: number;
  /** How long an accepted credential is trusted without asking again. */
  readonly cacheTtlMs: number;
  /** How long a refused credential is refused without asking again. */
  readonly refusalTtlMs: number;
  /** `on`: a single-document write is checked with `_has_privileges` before its lock. */
  readonly privileges: 'off' | 'on';
  /** Users, roles and API key names that may write in the foreground; empty: everyone. */
  readonly foregroundAllow: readonly string[];
  readonly foregroundDenied: ForegroundDenied;
  readonly refusalThrottle: RefusalThrottleSettings;
  /** Most locked writes one principal may have in this proxy at once; 0: unbounded. */
  readonly maxWaitingPerPrincipal: number;
}
