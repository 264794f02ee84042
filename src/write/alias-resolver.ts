import { setTimeout as sleep } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import pLimit, { type LimitFunction } from 'p-limit';
import { DateMathError } from '../classify/date-math/date-math-error.js';
import { isDateMathName, resolveDateMathName } from '../classify/date-math/date-math-index-name.js';
import { CLOCK_MARGIN_MS, settledName, steadyName } from '../classify/date-math/steady-name.js';
import { ProxyError } from '../errors/proxy-error.js';

/**
 * What `GET /{name}/_alias` tells about a name a client writes to: whether it is an alias (the
 * answer lists other indices than the name), and for a concrete index the aliases whose write index
 * it is.
 */
export interface NameAliases {
  readonly isAlias: boolean;
  readonly writeAliases: readonly string[];
  /**
   * Aliases listing the concrete index with `is_write_index: false`: the mark a rollover leaves on
   * the previous write index of an alias (absent: none).
   */
  readonly formerWriteAliases?: readonly string[];
  /** The data stream a concrete index is a backing index of (absent: none). */
  readonly dataStream?: string;
  /**
   * For an alias, the index its writes go to (`is_write_index: true`, or its only index); `null`
   * when it has none (Elasticsearch then refuses writes through it). For a concrete index, itself.
   */
  readonly writeIndex: string | null;
  /** For an alias, the `index_routing` it has on its write index (absent or null: none). */
  readonly writeIndexRouting?: string | null;
}

/** What the proxy needs to know of a name a client writes to. */
export interface ResolvedName {
  /** The name its document locks are keyed on. */
  readonly lockIndex: string;
  /** The concrete name looked up: the name the client wrote with its date math evaluated. */
  readonly concreteIndex: string;
  /**
   * The index a realtime read by id must name to see the document the write will change (a GET
   * through an alias with several indices is an error in Elasticsearch): the alias's write index.
   */
  readonly readIndex: string;
  /** The alias's `index_routing` on its write index, which Elasticsearch writes with in place of the request's; null: none. */
  readonly indexRouting: string | null;
}

/** Looks a name up; `null` when no index or alias of that name exists yet. */
export type AliasLookup = (name: string) => Promise<NameAliases | null>;

export interface AliasResolverOptions {
  readonly lookup: AliasLookup;
  /** Read on every look-up so a live reload applies to the next one. */
  readonly ttlMs: () => number;
  readonly capacity: number;
  readonly concurrency: number;
  /** The clock answers age on, in ms (tests); `performance.now` by default. */
  readonly now?: () => number;
  /** The wall clock date math is evaluated on, in ms since the epoch (tests); `Date.now` by default. */
  readonly wallClock?: () => number;
}

/** Look-ups in flight per proxy: enough to hide one round trip, few enough for any bulk. */
export const ALIAS_LOOKUP_CONCURRENCY = 4;

/**
 * The share of its life after which an answer in use is looked up again in the background: late
 * enough to add a quarter to the look-ups of a name written steadily, early enough for the look-up
 * to answer before the answer ends (a fifth of the TTL, 1 s by default). Without it, every write
 * arriving while a steadily written name was being looked up again waited for that look-up: one
 * upstream round trip every `proxy.alias.cache.ttl.ms` per name (a write at 5.00 s into each
 * benchmark slice waited 1.4–2.5 ms for it).
 */
const REFRESH_AFTER_SHARE_OF_TTL = 0.8;

/**
 * Maps the index name a client wrote to the name its locks are keyed on: one name per document
 * Elasticsearch writes, whichever way the client names it, chosen to stay put under a rollover.
 *
 * - Date math is evaluated first (date-math-index-name.ts, steady-name.ts).
 * - A concrete index is keyed on the smallest alias whose write index it is (Elasticsearch's rule:
 *   flagged `is_write_index: true`, or the alias's only index unless flagged false); else on the
 *   smallest alias flagged `false` on it — the mark a rollover leaves on the previous write index,
 *   so proxies that looked it up before and after a rollover key it alike; a backing index on its
 *   data stream; else on itself.
 * - A write through an alias is keyed as a direct write to its write index: usually the alias
 *   itself, which stays the key across a rollover whatever each proxy has cached.
 * - A data stream, and a name that does not exist yet, keys on itself. "Does not exist" is never
 *   cached: the name may become a rollover's write index at any moment.
 *
 * A failed look-up is an error: a write must never go through under a key that might not be the
 * one other writers use. Look-ups of one name are coalesced, at most `concurrency` run at once,
 * and the cache keeps the `capacity` most recently used names. An answer used in the last fifth
 * of its life is looked up again in the background (a name written steadily never makes a write
 * wait for its look-up); an answer is never used past its life, and a background look-up that
 * fails leaves it to end there.
 */
export class AliasResolver {
  private readonly cache: LRUCache<string, ResolvedName>;
  private readonly limit: LimitFunction;
  private readonly refreshing = new Set<string>();

  constructor(private readonly options: AliasResolverOptions) {
    this.limit = pLimit(options.concurrency);
    const clock = options.now;
    this.cache = new LRUCache<string, ResolvedName, unknown>({
      max: options.capacity,
      ttlAutopurge: false,
      // Should a background answer ever replace an entry a write's own look-up is refreshing (which
      // aborts that look-up), the write still gets its answer rather than a failure.
      ignoreFetchAbort: true,
      fetchMethod: (name) => this.limit(() => this.resolve(name)),
      ...(clock === undefined ? {} : { perf: { now: clock }, ttlResolution: 0 }),
    });
  }

  async lockIndexFor(name: string): Promise<string> {
    return (await this.resolveName(name)).lockIndex;
  }

  /**
   * Lock key and read target of `name` (an index name as the client wrote it, URL-decoded): its
   * date math evaluated first (steady-name.ts: near a boundary of the name, after it), then the
   * concrete name looked up (cached). Throws ProxyError DATE_MATH_INVALID / DATE_MATH_UNSUPPORTED
   * for a date-math name the proxy cannot evaluate, and ALIAS_RESOLUTION_FAILED when the look-up failed.
   */
  async resolveName(name: string, options: { readonly settle?: boolean } = {}): Promise<ResolvedName> {
    const concrete = options.settle === false ? this.concreteNameNow(name) : await this.concreteName(name);
    const ttlMs = this.options.ttlMs();
    const resolved = await this.cache.fetch(concrete, { ttl: ttlMs });
    this.refreshWhenAging(concrete, ttlMs);
    return resolved ?? { lockIndex: concrete, concreteIndex: concrete, readIndex: concrete, indexRouting: null };
  }

  /**
   * `name` with its date math evaluated at this instant, without waiting out a boundary: for a
   * fence's read under a held lock, which names the index Elasticsearch picks for the write that
   * follows it at once.
   */
  private concreteNameNow(name: string): string {
    try {
      return resolveDateMathName(name, (this.options.wallClock ?? Date.now)());
    } catch (error) {
      throw asProxyError(error);
    }
  }

  /** `name` with its date math evaluated as Elasticsearch evaluates it (IndexNameExpressionResolver). */
  private async concreteName(name: string): Promise<string> {
    try {
      return await settledName(name, this.options.wallClock ?? Date.now, CLOCK_MARGIN_MS, (ms) => sleep(ms));
    } catch (error) {
      throw asProxyError(error);
    }
  }

  /**
   * Whether `name` still evaluates, steadily, to the concrete index it was resolved to: checked once
   * its lock is held, since a lock wait can carry a write past a boundary of its date-math name.
   */
  stillResolvesTo(name: string, resolved: ResolvedName): boolean {
    if (!isDateMathName(name)) return true;
    try {
      return steadyName(name, (this.options.wallClock ?? Date.now)(), CLOCK_MARGIN_MS) === resolved.concreteIndex;
    } catch {
      return false;
    }
  }

  /** Names cached right now (for tests and the admin view). */
  get size(): number {
    return this.cache.size;
  }

  private refreshWhenAging(name: string, ttlMs: number): void {
    if (this.refreshing.has(name) || this.cache.getRemainingTTL(name) > ttlMs * (1 - REFRESH_AFTER_SHARE_OF_TTL)) return;
    const aging = this.cache.peek(name);
    if (aging === undefined) return;
    this.refreshing.add(name);
    void this.limit(() => this.resolve(name))
      .then((answer) => {
        // Only over the answer it refreshes: a write's own look-up may have replaced it meanwhile
        // with a newer one, and an expired answer is looked up again by the next write.
        if (this.cache.peek(name) !== aging) return;
        if (answer === undefined) this.cache.delete(name);
        else this.cache.set(name, answer, { ttl: this.options.ttlMs() });
      })
      // A failed look-up leaves the answer to expire; the write after that looks up on its own.
      .catch(() => undefined)
      .finally(() => this.refreshing.delete(name));
  }

  /**
   * `undefined` (not cached) for a name that does not exist yet: it may become a rollover's new
   * write index at any moment, and a cached "no such index" would key direct writes to it on its
   * own name for the rest of the TTL.
   */
  private async resolve(name: string): Promise<ResolvedName | undefined> {
    const aliases = await this.lookUp(name);
    if (aliases === null) return undefined;
    const lockIndex = aliases.isAlias && aliases.writeIndex !== null ? await this.aliasLockIndex(name, aliases.writeIndex) : lockIndexOf(name, aliases);
    return { lockIndex, concreteIndex: name, readIndex: aliases.writeIndex ?? name, indexRouting: aliases.writeIndexRouting ?? null };
  }

  /**
   * A write through an alias is keyed as a direct write to its write index is, when that index
   * names the alias among its write aliases (it may also be the write index of a smaller-named
   * alias): one key for both ways to one document. Otherwise (the two answers raced a change) on
   * the alias itself.
   */
  private async aliasLockIndex(alias: string, writeIndex: string): Promise<string> {
    const target = await this.lookUp(writeIndex);
    return target !== null && target.writeAliases.includes(alias) ? lockIndexOf(writeIndex, target) : alias;
  }

  private async lookUp(name: string): Promise<NameAliases | null> {
    try {
      return await this.options.lookup(name);
    } catch (error) {
      throw new ProxyError('ALIAS_RESOLUTION_FAILED', `could not resolve [${name}] to its write index: ${describe(error)}`, {
        cause: error,
        meta: { index: name },
      });
    }
  }
}

/**
 * The index name a document's lock is keyed on: a name that does not stay put under a rollover
 * (see the class comment). For a concrete index, in this order: its data stream; the smallest alias
 * whose write index it is; the smallest alias it was the write index of (flagged `false` by a
 * rollover), so that a proxy that looked it up before the rollover and one that looked it up after
 * key it alike; else itself.
 */
export function lockIndexOf(name: string, aliases: NameAliases | null): string {
  if (aliases === null || aliases.isAlias) return name;
  if (aliases.dataStream !== undefined) return aliases.dataStream;
  const [writeAlias] = [...aliases.writeAliases].sort();
  const [formerWriteAlias] = [...(aliases.formerWriteAliases ?? [])].sort();
  return writeAlias ?? formerWriteAlias ?? name;
}

/** A DateMathError as the 400 the client gets; anything else as it is. */
function asProxyError(error: unknown): unknown {
  return error instanceof DateMathError ? error.toProxyError() : error;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
