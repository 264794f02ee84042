import type { LockEngine } from '../lock/lock-engine.js';
import type { UpstreamForwarder } from '../elasticsearch/upstream-forwarder.js';

/** One named condition for `/readyz`: resolves `null` when satisfied, else the reason it is not. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<string | null>;
}

export interface ReadinessReport {
  readonly ready: boolean;
  readonly reasons: readonly { readonly check: string; readonly reason: string }[];
}

/** The set of checks `/readyz` runs; later issues add theirs (e.g. "draining"). */
export class Readiness {
  private readonly checks: ReadinessCheck[] = [];

  constructor(checks: readonly ReadinessCheck[] = []) {
    this.checks.push(...checks);
  }

  add(check: ReadinessCheck): void {
    this.checks.push(check);
  }

  async evaluate(): Promise<ReadinessReport> {
    const results = await Promise.all(
      this.checks.map(async (check) => ({ check: check.name, reason: await check.check().catch((error: unknown) => String(error)) })),
    );
    const reasons = results.flatMap((result) => (result.reason === null ? [] : [{ check: result.check, reason: result.reason }]));
    return { ready: reasons.length === 0, reasons };
  }
}

/** A recent upstream answer is reused for this long, so a busy probe does not load the cluster. */
export const UPSTREAM_CHECK_CACHE_MS = 1_000;

export interface UpstreamCheckOptions {
  /** `Authorization` for the proxy's own call (from `elasticsearch.auth`), or null. */
  readonly authorization: string | null;
  readonly cacheMs?: number;
  readonly now?: () => number;
}

/**
 * Ready when some node answers `HEAD /` through the forwarder's pool. Without proxy credentials
 * a 401/403 still proves the cluster is up (clients bring their own credentials).
 */
export function upstreamCheck(forwarder: UpstreamForwarder, options: UpstreamCheckOptions): ReadinessCheck {
  const cacheMs = options.cacheMs ?? UPSTREAM_CHECK_CACHE_MS;
  const now = options.now ?? Date.now;
  let cached: { at: number; reason: string | null } | null = null;
  let pending: Promise<string | null> | null = null;

  async function probe(): Promise<string | null> {
    const rawHeaders = options.authorization === null ? [] : ['authorization', options.authorization];
    try {
      const response = await forwarder.exchange({ method: 'HEAD', url: '/', rawHeaders, body: Buffer.alloc(0) });
      if (response.status >= 200 && response.status < 300) return null;
      if (options.authorization === null && (response.status === 401 || response.status === 403)) return null;
      return `Elasticsearch answered HEAD / with status ${response.status}`;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  return {
    name: 'elasticsearch',
    async check() {
      if (cached !== null && now() - cached.at < cacheMs) return cached.reason;
      pending ??= probe().then((reason) => {
        cached = { at: now(), reason };
        pending = null;
        return reason;
      });
      return pending;
    },
  };
}

export function lockEngineCheck(engine: LockEngine): ReadinessCheck {
  return {
    name: 'zookeeper',
    async check() {
      const state = engine.state();
      return state === 'connected' ? null : `lock service is ${state}`;
    },
  };
}
