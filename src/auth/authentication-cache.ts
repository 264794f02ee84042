import { LRUCache } from 'lru-cache';
import type { CredentialVerdict } from './cluster-authentication.js';
import { CredentialKeys } from './credential-key.js';

export interface AuthenticationCacheOptions {
  /** Asks the cluster (rejects when it cannot be reached). */
  readonly ask: (credentials: readonly string[]) => Promise<CredentialVerdict>;
  readonly size: number;
  /** Read per answer, so that a reloaded value applies to the next one. */
  readonly ttlMs: () => number;
  readonly refusalTtlMs: () => number;
  readonly keys?: CredentialKeys;
}

/** Where a verdict came from: this process's memory or a question to the cluster. */
export interface CachedVerdict {
  readonly verdict: CredentialVerdict;
  readonly cached: boolean;
  /** The credentials' keyed hash (for caches of what these credentials may do). */
  readonly key: string;
}

/**
 * The cluster's verdicts on credentials, kept for a while so that a write pays for its
 * authentication once per credential and time to live, not once per write. Keyed by a keyed hash
 * (credential-key.ts), never the credentials. Accepted credentials are kept for `ttlMs`: a key or
 * password revoked in the cluster still passes here until then (the cluster itself then refuses
 * the write, but the write has queued for its locks). Refusals are kept only `refusalTtlMs`, so a
 * credential just created is not refused for long. Answers that are neither are never kept.
 * Concurrent checks of one credential share one question to the cluster.
 */
export class AuthenticationCache {
  private readonly verdicts: LRUCache<string, CredentialVerdict>;
  private readonly asking = new Map<string, Promise<CredentialVerdict>>();
  private readonly keys: CredentialKeys;

  constructor(private readonly options: AuthenticationCacheOptions) {
    this.verdicts = new LRUCache({ max: options.size, ttl: 1, ttlAutopurge: false });
    this.keys = options.keys ?? new CredentialKeys();
  }

  async verdictFor(credentials: readonly string[]): Promise<CachedVerdict> {
    const key = this.keys.keyOf(credentials);
    const known = this.verdicts.get(key);
    if (known !== undefined) return { verdict: known, cached: true, key };
    return { verdict: await this.ask(key, credentials), cached: false, key };
  }

  /** The verdict kept for `credentials`, without asking the cluster: null when none is kept. */
  knownVerdict(credentials: readonly string[]): CredentialVerdict | null {
    return this.verdicts.get(this.keys.keyOf(credentials)) ?? null;
  }

  /** Verdicts kept now (tests, metrics). */
  get size(): number {
    return this.verdicts.size;
  }

  private ask(key: string, credentials: readonly string[]): Promise<CredentialVerdict> {
    const pending = this.asking.get(key);
    if (pending !== undefined) return pending;
    const question = this.options
      .ask(credentials)
      .then((verdict) => {
        this.keep(key, verdict);
        return verdict;
      })
      .finally(() => this.asking.delete(key));
    this.asking.set(key, question);
    return question;
  }

  private keep(key: string, verdict: CredentialVerdict): void {
    const ttl = verdict.kind === 'authenticated' ? this.options.ttlMs() : verdict.kind === 'refused' ? this.options.refusalTtlMs() : 0;
    // lru-cache reads a ttl of 0 as "forever": nothing is kept instead.
    if (ttl > 0) this.verdicts.set(key, verdict, { ttl });
  }
}
