import type { Client } from '@elastic/elasticsearch';
import type { Logger } from 'pino';
import { ProxyError } from '../errors/proxy-error.js';

/** What `GET /_alias/{name}` tells about one name: the indices behind it and which takes writes. */
export type AliasTargets = Readonly<Record<string, { readonly isWriteIndex: boolean | undefined }>>;

/** Looks up an alias; `null` when the name is not an alias (a concrete index or a data stream). */
export type AliasLookup = (name: string) => Promise<AliasTargets | null>;

interface CacheEntry {
  readonly lockIndex: string;
  readonly expiresAt: number;
}

/**
 * Maps the index name a client wrote to the name its locks are keyed on, so that a write through
 * an alias and a write to the index behind it contend for the same lock. Names that are not
 * aliases (concrete indices, data streams) key on themselves. A failed lookup is an error: a
 * write must never go through under a key that might not be the one other writers use.
 */
export class AliasResolver {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<CacheEntry>>();

  constructor(
    private readonly lookup: AliasLookup,
    private readonly ttlMs: () => number,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async lockIndexFor(name: string): Promise<string> {
    const cached = this.cache.get(name);
    if (cached !== undefined && cached.expiresAt > this.now()) return cached.lockIndex;
    return (await this.refresh(name)).lockIndex;
  }

  /**
   * Called with the `_index` Elasticsearch reported for a forwarded write. A mismatch with what
   * the cache predicted means an alias moved (or appeared) since the lookup: drop the entry so
   * the next write looks it up again. Data streams answer with their backing index, which is
   * expected and keeps the entry.
   */
  observeWrittenIndex(name: string, writtenIndex: string): void {
    const cached = this.cache.get(name);
    if (cached === undefined || writtenIndex === cached.lockIndex || isDataStreamBackingIndex(writtenIndex)) return;
    this.cache.delete(name);
    this.logger.warn(
      { index: name, expected: cached.lockIndex, written: writtenIndex },
      'alias resolution changed: a write landed in another index than predicted; refreshing',
    );
  }

  private refresh(name: string): Promise<CacheEntry> {
    const pending = this.inFlight.get(name);
    if (pending !== undefined) return pending;
    const request = this.resolve(name).finally(() => this.inFlight.delete(name));
    this.inFlight.set(name, request);
    return request;
  }

  private async resolve(name: string): Promise<CacheEntry> {
    let targets: AliasTargets | null;
    try {
      targets = await this.lookup(name);
    } catch (error) {
      throw new ProxyError('ALIAS_RESOLUTION_FAILED', `could not resolve [${name}] to its write index: ${describe(error)}`, {
        cause: error,
        meta: { index: name },
      });
    }
    const entry: CacheEntry = {
      lockIndex: targets === null ? name : (writeIndexOf(targets) ?? name),
      expiresAt: this.now() + this.ttlMs(),
    };
    this.cache.set(name, entry);
    return entry;
  }
}

/** The write index of an alias: the one flagged `is_write_index`, or the only index behind it. */
export function writeIndexOf(targets: AliasTargets): string | null {
  const indices = Object.keys(targets);
  const flagged = indices.filter((index) => targets[index]?.isWriteIndex === true);
  if (flagged.length === 1) return flagged[0] ?? null;
  if (indices.length === 1 && targets[indices[0] ?? '']?.isWriteIndex !== false) return indices[0] ?? null;
  // No write index: Elasticsearch rejects the write itself; keying on the alias is harmless.
  return null;
}

function isDataStreamBackingIndex(index: string): boolean {
  return index.startsWith('.ds-');
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `AliasLookup` over the official client: `GET /_alias/{name}`, 404 meaning "not an alias". */
export function clusterAliasLookup(client: Client): AliasLookup {
  return async (name) => {
    const response = await client.indices.getAlias({ name }, { ignore: [404], meta: true });
    if (response.statusCode === 404) return null;
    const targets: Record<string, { isWriteIndex: boolean | undefined }> = {};
    for (const [index, entry] of Object.entries(response.body)) {
      const alias = entry.aliases?.[name];
      if (alias !== undefined) targets[index] = { isWriteIndex: alias.is_write_index };
    }
    return Object.keys(targets).length === 0 ? null : targets;
  };
}
