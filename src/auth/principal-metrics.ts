import { Counter, Histogram, type Registry } from 'prom-client';
import { LOCK_SECONDS_BUCKETS, METRIC_PREFIX } from '../metrics/metric-set.js';
import type { LockedRequestReport } from '../write/write-observer.js';
import type { ForegroundDenied } from './auth-settings.js';
import type { WritePrincipals } from './admitted-write-path.js';
import type { CredentialVerdict } from './cluster-authentication.js';
import { PrincipalLabels, UNKNOWN_PRINCIPAL } from './principal-labels.js';
import type { RefusalTreatment } from './refusal-throttle.js';

/**
 * The metrics of who writes: credential checks, foreground rights and shares refused, and lock
 * waits and outcomes by principal (`principal` label bounded by `PrincipalLabels`). The lock
 * reports of the write path carry a request id; the principal of each write in flight is known
 * here from the admission (`WritePrincipals`), so the write path itself stays unaware of it.
 */
export class PrincipalMetrics implements WritePrincipals {
  private readonly labels = new PrincipalLabels();
  private readonly inFlight = new Map<string, string>();
  private readonly checks: Counter<'result' | 'source'>;
  private readonly foregroundDenials: Counter<'principal' | 'action'>;
  private readonly shareRefusals: Counter<'principal'>;
  private readonly lockWait: Histogram<'principal' | 'priority' | 'outcome'>;
  private readonly throttledRefusals: Counter<'action'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.checks = new Counter({
      name: `${METRIC_PREFIX}auth_checks_total`,
      help: 'Credential checks of locked writes, by verdict (authenticated, refused, unanswered) and source (cache or cluster)',
      labelNames: ['result', 'source'],
      registers,
    });
    this.foregroundDenials = new Counter({
      name: `${METRIC_PREFIX}foreground_denied_total`,
      help: 'Foreground writes from principals outside proxy.priority.foreground.allow, by what became of them (background or reject)',
      labelNames: ['principal', 'action'],
      registers,
    });
    this.shareRefusals = new Counter({
      name: `${METRIC_PREFIX}principal_share_refused_total`,
      help: 'Writes refused with 429 because their principal had proxy.lock.max.waiting.per.principal writes in flight',
      labelNames: ['principal'],
      registers,
    });
    this.throttledRefusals = new Counter({
      name: `${METRIC_PREFIX}auth_refusals_throttled_total`,
      help: 'Credential refusals throttled on their connection (proxy.auth.refusal.*): answered after a delay (delayed), or followed by closing the connection (closed)',
      labelNames: ['action'],
      registers,
    });
    this.lockWait = new Histogram({
      name: `${METRIC_PREFIX}principal_lock_wait_seconds`,
      help: 'Lock waits by principal (first 100 principals by name, then "other"; "unknown" when credentials are not checked), priority and outcome (timeouts and refusals included)',
      labelNames: ['principal', 'priority', 'outcome'],
      buckets: [...LOCK_SECONDS_BUCKETS],
      registers,
    });
  }

  begin(requestId: string, principal: string | null): void {
    if (principal !== null) this.inFlight.set(requestId, this.labels.labelOf(principal));
  }

  end(requestId: string): void {
    this.inFlight.delete(requestId);
  }

  lockedRequest(report: LockedRequestReport): void {
    const principal = this.inFlight.get(report.requestId) ?? UNKNOWN_PRINCIPAL;
    this.lockWait.observe({ principal, priority: report.priority, outcome: report.outcome }, report.waitMs / 1000);
  }

  credentialChecked(result: CredentialVerdict['kind'], cached: boolean): void {
    this.checks.inc({ result, source: cached ? 'cache' : 'cluster' });
  }

  foregroundDenied(principal: string | null, action: ForegroundDenied): void {
    this.foregroundDenials.inc({ principal: this.labels.labelOf(principal), action });
  }

  refusalThrottled(treatment: RefusalTreatment): void {
    if (treatment.delayMs > 0) this.throttledRefusals.inc({ action: 'delayed' });
    if (treatment.close) this.throttledRefusals.inc({ action: 'closed' });
  }

  shareExceeded(principal: string): void {
    this.shareRefusals.inc({ principal: this.labels.labelOf(principal) });
  }
}
