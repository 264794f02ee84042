import type { DeadLetterRecord } from './dead-letter-record.js';
import type { DeadLetterListing, DeadLetterStore } from './dead-letter-store.js';

/** A store several instances share that can also say which records it holds (the index store). */
export interface SharedDeadLetterStore extends DeadLetterStore {
  /** A name for messages, e.g. the index. */
  readonly index: string;
  knownIds(ids: readonly string[]): Promise<ReadonlySet<string>>;
}

/** The two log levels the store uses; a pino logger fits. */
export interface DeadLetterLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * The dead-letter queue when `proxy.deadletter.index` is set: this instance's local files plus the
 * shared index.
 *
 * - `append` writes the local file first (fsynced: the record is durable before anything else
 *   happens, and a failure there fails the append), then the index. An index failure does not fail
 *   the append: the record stays on disk and the failure is logged at error with the record id.
 * - Reads use the index, the view shared by every instance, when it answers. Records of this
 *   instance that never reached the index (their index append failed) are merged in from the local
 *   files and named in the listing's warnings, so no record is ever invisible here.
 * - When the index cannot be read, `list` and `get` fall back to the local files, with a warning:
 *   that view holds only this instance's records and does not know of replays made elsewhere.
 * - `markReplayed` marks the index document and the local record (where each has it); with the
 *   index unreachable it succeeds only for a record in the local files.
 */
export class MirroredDeadLetterStore implements DeadLetterStore {
  constructor(
    private readonly local: DeadLetterStore,
    private readonly shared: SharedDeadLetterStore,
    private readonly logger: DeadLetterLogger,
  ) {}

  async append(record: DeadLetterRecord): Promise<void> {
    await this.local.append(record);
    try {
      await this.shared.append(record);
    } catch (error) {
      this.logger.error(
        { err: error, deadLetterId: record.id, index: this.shared.index },
        'dead letter kept in the local file only: appending it to the shared index failed',
      );
    }
  }

  async list(options: { readonly includeReplayed?: boolean } = {}): Promise<DeadLetterListing> {
    const localListing = await this.local.list(options);
    try {
      return await this.sharedView(localListing, options);
    } catch (error) {
      // Said once, in the listing the caller shows (the proxy itself never lists).
      return { ...localListing, warnings: [...(localListing.warnings ?? []), this.fallbackWarning(error)] };
    }
  }

  async get(id: string): Promise<DeadLetterRecord | null> {
    try {
      const shared = await this.shared.get(id);
      if (shared !== null) return shared;
    } catch (error) {
      this.logger.warn({ err: error, index: this.shared.index, deadLetterId: id }, 'dead-letter index unreachable: reading the local files only');
    }
    return this.local.get(id);
  }

  async markReplayed(id: string, status: string, at: Date = new Date()): Promise<boolean> {
    let markedShared = false;
    let sharedError: unknown = null;
    try {
      markedShared = await this.shared.markReplayed(id, status, at);
    } catch (error) {
      sharedError = error;
      this.logger.warn({ err: error, index: this.shared.index, deadLetterId: id }, 'could not mark the record replayed in the dead-letter index');
    }
    const markedLocal = await this.local.markReplayed(id, status, at);
    // The index may hold the record (another instance's): "unknown id" would be a guess.
    if (sharedError !== null && !markedLocal) throw sharedError;
    return markedShared || markedLocal;
  }

  /** The index's listing plus this instance's records it lacks. */
  private async sharedView(localListing: DeadLetterListing, options: { readonly includeReplayed?: boolean }): Promise<DeadLetterListing> {
    const sharedListing = await this.shared.list(options);
    const listed = new Set(sharedListing.records.map((record) => record.id));
    // Not in this listing may still mean in the index (replayed elsewhere, or past a truncation).
    const candidates = localListing.records.filter((record) => !listed.has(record.id));
    const known = candidates.length === 0 ? new Set<string>() : await this.shared.knownIds(candidates.map((record) => record.id));
    const localOnly = candidates.filter((record) => !known.has(record.id));
    const warnings = [...(sharedListing.warnings ?? [])];
    if (localOnly.length > 0) {
      warnings.push(
        `${localOnly.length} record(s) are only in this instance's files (appending them to index [${this.shared.index}] failed): ${localOnly
          .slice(0, 5)
          .map((record) => record.id)
          .join(', ')}${localOnly.length > 5 ? ', ...' : ''}`,
      );
    }
    return {
      records: [...sharedListing.records, ...localOnly].sort(byCreation),
      corruptLines: [...sharedListing.corruptLines, ...localListing.corruptLines],
      ...(sharedListing.truncated === true ? { truncated: true } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  }

  private fallbackWarning(error: unknown): string {
    const reason = error instanceof Error ? error.message : String(error);
    return `the dead-letter index [${this.shared.index}] could not be read (${reason}): listing this instance's files only; records of other instances and replays made from them are not shown`;
  }
}

function byCreation(a: DeadLetterRecord, b: DeadLetterRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
