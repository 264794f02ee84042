import { errors, type Client, type estypes } from '@elastic/elasticsearch';
import { ProxyError } from '../errors/proxy-error.js';
import { parseDeadLetterRecord } from './dead-letter-line.js';
import type { DeadLetterRecord } from './dead-letter-record.js';
import type { CorruptLine, DeadLetterListing, DeadLetterStore } from './dead-letter-store.js';

/** Records fetched per search page. */
const PAGE_SIZE = 1000;
/**
 * Most records one `list` returns (oldest first). Bounds the memory of `dlq list` / `replay --all`;
 * beyond it the listing says `truncated` and a later run (after replaying) sees the rest. The same
 * figure as Elasticsearch's default `index.max_result_window`, though paging uses `search_after`.
 */
export const MAX_LISTED_RECORDS = 10_000;

/** Per call: a dead-lettered write's 429 waits for the append, so a hanging cluster must not hold it for long. */
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/**
 * The index mapping, set explicitly by the first append. `dynamic: false` keeps fields added to the
 * record later in `_source` without indexing them, so a newer record never fails an append on an
 * older mapping (`strict` would). Headers and body are stored, never indexed: arbitrary keys would
 * explode the mapping and a body may be large or binary (base64).
 */
export const DEAD_LETTER_MAPPINGS: estypes.MappingTypeMapping = {
  dynamic: false,
  properties: {
    id: { type: 'keyword' },
    createdAt: { type: 'date' },
    method: { type: 'keyword' },
    path: { type: 'keyword', ignore_above: 2048 },
    query: { type: 'keyword', ignore_above: 2048 },
    headers: { type: 'object', enabled: false },
    hadCredentials: { type: 'boolean' },
    body: { type: 'object', enabled: false },
    priority: { type: 'keyword' },
    keys: { properties: { index: { type: 'keyword' }, id: { type: 'keyword' } } },
    attempts: { type: 'integer' },
    attemptedAt: { type: 'date' },
    lastError: { properties: { code: { type: 'keyword' }, message: { type: 'text' } } },
    replayedAt: { type: 'date' },
    replayStatus: { type: 'keyword' },
  },
};

export interface ElasticsearchDeadLetterStoreOptions {
  /** Per request (default 10 s). */
  readonly requestTimeoutMs?: number;
  /** Records per search page (default 1000). */
  readonly pageSize?: number;
  /** Most records one `list` returns (default `MAX_LISTED_RECORDS`). */
  readonly maxListed?: number;
}

/**
 * The dead-letter queue as documents of one Elasticsearch index (`_id` = record id), shared by every
 * proxy instance pointed at the cluster. A missing index reads as an empty queue.
 *
 * Writes use `refresh=wait_for`: the create is durable once acknowledged anyway (the translog is
 * synced per request by default), but a search sees it only after the next refresh; waiting for that
 * refresh (not forcing one) makes the record visible to `dlq list` on any host as soon as the client
 * has its 429, and a replayed mark visible to the next `replay --all`, at the cost of up to one
 * refresh interval (1 s by default) on a rare path.
 */
export class ElasticsearchDeadLetterStore implements DeadLetterStore {
  private indexReady: Promise<void> | null = null;
  /** Retries follow the client's own `maxRetries` (the cluster client's: 1, to try another node). */
  private readonly transport: { requestTimeout: number };
  private readonly pageSize: number;
  private readonly maxListed: number;

  constructor(
    private readonly client: Client,
    readonly index: string,
    options: ElasticsearchDeadLetterStoreOptions = {},
  ) {
    this.transport = { requestTimeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS };
    this.pageSize = options.pageSize ?? PAGE_SIZE;
    this.maxListed = options.maxListed ?? MAX_LISTED_RECORDS;
  }

  async append(record: DeadLetterRecord): Promise<void> {
    await this.ensureIndex();
    try {
      await this.client.create({ index: this.index, id: record.id, document: record, refresh: 'wait_for' }, this.transport);
    } catch (error) {
      // Ids are unique per record, so a conflict means a retried attempt already stored this one.
      if (errorType(error) === 'version_conflict_engine_exception') return;
      throw this.failure('append', error);
    }
  }

  async list(options: { readonly includeReplayed?: boolean } = {}): Promise<DeadLetterListing> {
    const records: DeadLetterRecord[] = [];
    const corruptLines: CorruptLine[] = [];
    let after: estypes.SortResults | undefined;
    let seen = 0;
    for (;;) {
      const size = Math.min(this.pageSize, this.maxListed - seen);
      const hits = await this.searchPage(options.includeReplayed === true, after, size);
      seen += hits.length;
      for (const hit of hits) {
        const parsed = parseDeadLetterRecord(hit._source);
        if (typeof parsed === 'string') corruptLines.push({ file: `${this.index}/_doc/${hit._id ?? '?'}`, line: 1, reason: parsed });
        else records.push(parsed);
      }
      const last = hits.at(-1);
      if (hits.length < size || last?.sort === undefined) return { records, corruptLines };
      after = last.sort;
      if (seen >= this.maxListed) {
        const more = await this.searchPage(options.includeReplayed === true, after, 1);
        return { records, corruptLines, ...(more.length > 0 ? { truncated: true } : {}) };
      }
    }
  }

  async get(id: string): Promise<DeadLetterRecord | null> {
    let found: estypes.GetGetResult;
    try {
      found = await this.client.get({ index: this.index, id }, this.transport);
    } catch (error) {
      if (isNotFound(error)) return null;
      throw this.failure('get', error);
    }
    if (!found.found) return null;
    const parsed = parseDeadLetterRecord(found._source);
    if (typeof parsed === 'string') throw new ProxyError('DEAD_LETTER_INDEX_FAILED', `dead-letter index [${this.index}]: document [${id}] is not a dead-letter record: ${parsed}`);
    return parsed;
  }

  async markReplayed(id: string, status: string, at: Date = new Date()): Promise<boolean> {
    // An update to a missing index would auto-create it with a dynamic mapping; create it properly first.
    await this.ensureIndex();
    try {
      await this.client.update(
        { index: this.index, id, doc: { replayedAt: at.toISOString(), replayStatus: status }, refresh: 'wait_for', retry_on_conflict: 3 },
        this.transport,
      );
      return true;
    } catch (error) {
      // document_missing_exception, or index_not_found_exception where auto-creation is off.
      if (isNotFound(error)) return false;
      throw this.failure('mark replayed', error);
    }
  }

  /** Which of `ids` have a document in the index (a missing index knows none). */
  async knownIds(ids: readonly string[]): Promise<ReadonlySet<string>> {
    const known = new Set<string>();
    for (let start = 0; start < ids.length; start += this.pageSize) {
      const chunk = ids.slice(start, start + this.pageSize);
      try {
        const answer = await this.client.search(
          { index: this.index, size: chunk.length, query: { ids: { values: [...chunk] } }, _source: false, ignore_unavailable: true, track_total_hits: false },
          this.transport,
        );
        for (const hit of answer.hits.hits) if (hit._id !== undefined) known.add(hit._id);
      } catch (error) {
        if (isNotFound(error)) return known;
        throw this.failure('look up ids', error);
      }
    }
    return known;
  }

  private async searchPage(includeReplayed: boolean, after: estypes.SortResults | undefined, size: number): Promise<estypes.SearchHit[]> {
    try {
      const answer = await this.client.search(
        {
          index: this.index,
          size,
          // `id` breaks ties between records of the same millisecond (sorting on `_id` is disallowed in 8.x).
          sort: [{ createdAt: 'asc' }, { id: 'asc' }],
          ...(after !== undefined ? { search_after: after } : {}),
          // A null `replayedAt` is not indexed, so "does not exist" means "not replayed yet".
          ...(includeReplayed ? {} : { query: { bool: { must_not: [{ exists: { field: 'replayedAt' } }] } } }),
          ignore_unavailable: true,
          track_total_hits: false,
        },
        this.transport,
      );
      return answer.hits.hits;
    } catch (error) {
      if (isNotFound(error)) return [];
      throw this.failure('list', error);
    }
  }

  /** Creates the index with its mapping once per store; another instance creating it first is fine. */
  private ensureIndex(): Promise<void> {
    this.indexReady ??= this.createIndex().catch((error: unknown) => {
      this.indexReady = null;
      throw error;
    });
    return this.indexReady;
  }

  private async createIndex(): Promise<void> {
    try {
      await this.client.indices.create({ index: this.index, settings: { number_of_shards: 1 }, mappings: DEAD_LETTER_MAPPINGS }, this.transport);
    } catch (error) {
      if (errorType(error) === 'resource_already_exists_exception') return;
      throw this.failure('create index', error);
    }
  }

  private failure(operation: string, error: unknown): ProxyError {
    const detail = error instanceof Error ? error.message : String(error);
    return new ProxyError('DEAD_LETTER_INDEX_FAILED', `dead-letter index [${this.index}]: ${operation} failed: ${detail}`, {
      cause: error,
      meta: { index: this.index, operation },
    });
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof errors.ResponseError && error.statusCode === 404;
}

/** `error.type` of an Elasticsearch error answer, or null. */
function errorType(error: unknown): string | null {
  if (!(error instanceof errors.ResponseError)) return null;
  const body: unknown = error.body;
  if (typeof body !== 'object' || body === null || !('error' in body)) return null;
  const detail: unknown = body.error;
  if (typeof detail !== 'object' || detail === null || !('type' in detail)) return null;
  return typeof detail.type === 'string' ? detail.type : null;
}
