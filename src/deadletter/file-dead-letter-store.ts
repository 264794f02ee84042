import { mkdir, open, readdir, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDeadLetterLine, serializeDeadLetterLine, type DeadLetterLine } from './dead-letter-line.js';
import type { DeadLetterRecord } from './dead-letter-record.js';
import type { CorruptLine, DeadLetterListing, DeadLetterStore } from './dead-letter-store.js';

const FILE_PATTERN = /^dead-letter-\d{4}-\d{2}-\d{2}(\.replays)?\.jsonl$/;

/**
 * The dead-letter queue as append-only JSON-lines files under one directory, one file per UTC day
 * (`dead-letter-2026-11-21.jsonl`). Appends from this process are serialised so lines never
 * interleave. A replay is recorded as a marker line, never by rewriting a record, in a file of its
 * own (`dead-letter-2026-11-21.replays.jsonl`): `dlq replay` marks records while the proxy appends,
 * and with one writer per file the cut-back below never touches a line another process wrote.
 *
 * An append is whole or not acknowledged: it resolves only once its whole line is written and
 * flushed to disk (`datasync`, and the directory for a new file). When any step fails (a full disk,
 * a file-size limit, an I/O error) the file is cut back to its length before the append and the
 * append rejects, so a half-written line never stays behind to swallow the next record. A line torn
 * by a crash mid-write (nothing acknowledged it) is skipped and reported by `list`; every append
 * checks the file's end first and terminates such a line before writing its own.
 *
 * Several proxies must not share one directory (appends are serialised per process only); use
 * the Elasticsearch store to share a queue.
 */
export class FileDeadLetterStore implements DeadLetterStore {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly dir: string) {}

  append(record: DeadLetterRecord): Promise<void> {
    const createdAt = new Date(record.createdAt);
    return this.enqueue({ type: 'record', record }, fileNameFor(Number.isNaN(createdAt.getTime()) ? new Date() : createdAt));
  }

  async markReplayed(id: string, status: string, at: Date = new Date()): Promise<boolean> {
    if ((await this.get(id)) === null) return false;
    await this.enqueue({ type: 'replayed', id, replayedAt: at.toISOString(), replayStatus: status }, replayMarkerFileNameFor(at));
    return true;
  }

  async get(id: string): Promise<DeadLetterRecord | null> {
    const { records } = await this.list({ includeReplayed: true });
    return records.find((record) => record.id === id) ?? null;
  }

  async list(options: { readonly includeReplayed?: boolean } = {}): Promise<DeadLetterListing> {
    const { lines, corruptLines } = await this.readAll();
    const records = new Map<string, DeadLetterRecord>();
    for (const line of lines) {
      if (line.type === 'record') records.set(line.record.id, line.record);
    }
    for (const line of lines) {
      const record = line.type === 'replayed' ? records.get(line.id) : undefined;
      if (line.type === 'replayed' && record !== undefined) {
        records.set(line.id, { ...record, replayedAt: line.replayedAt, replayStatus: line.replayStatus });
      }
    }
    const sorted = [...records.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return {
      records: options.includeReplayed === true ? sorted : sorted.filter((record) => record.replayedAt === null),
      corruptLines,
    };
  }

  private enqueue(line: DeadLetterLine, fileName: string): Promise<void> {
    const write = this.tail.then(() => this.write(line, fileName));
    // The next append waits for this one whether it succeeded or not.
    this.tail = write.catch(() => undefined);
    return write;
  }

  private async write(line: DeadLetterLine, fileName: string): Promise<void> {
    await ensureDirectory(this.dir);
    const handle = await open(join(this.dir, fileName), 'a+');
    try {
      const { size } = await handle.stat();
      try {
        const repair = (await endsTorn(handle, size)) ? '\n' : '';
        await handle.appendFile(repair + serializeDeadLetterLine(line), 'utf8');
        await handle.datasync();
        if (size === 0) await syncDirectory(this.dir);
      } catch (error) {
        throw await rolledBack(handle, size, error);
      }
    } finally {
      await handle.close();
    }
  }

  private async readAll(): Promise<{ lines: DeadLetterLine[]; corruptLines: CorruptLine[] }> {
    const lines: DeadLetterLine[] = [];
    const corruptLines: CorruptLine[] = [];
    for (const file of await this.files()) {
      const text = await readFile(join(this.dir, file), 'utf8');
      const rows = text.split('\n');
      rows.forEach((row, index) => {
        const isLast = index === rows.length - 1;
        if (row === '') return;
        if (isLast) {
          corruptLines.push({ file, line: index + 1, reason: 'torn write: the last line has no newline' });
          return;
        }
        const parsed = parseDeadLetterLine(row);
        if (typeof parsed === 'string') corruptLines.push({ file, line: index + 1, reason: parsed });
        else lines.push(parsed);
      });
    }
    return { lines, corruptLines };
  }

  private async files(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((name) => FILE_PATTERN.test(name)).sort();
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return [];
      throw error;
    }
  }
}

/** Whether the file's last line lacks its newline: a write torn by a crash, never acknowledged. */
async function endsTorn(handle: FileHandle, size: number): Promise<boolean> {
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/**
 * Cuts the file back to its length before a failed append: whatever part of the line reached it
 * was not acknowledged and must not be read as a record or glued to the next. The append's own
 * error is what the caller gets; a cut that fails too is named in its message (the next append's
 * check still terminates a torn line).
 */
async function rolledBack(handle: FileHandle, size: number, error: unknown): Promise<unknown> {
  try {
    await handle.truncate(size);
    await handle.datasync();
    return error;
  } catch (cutError) {
    if (error instanceof Error) error.message += ` (and cutting the file back to ${size} bytes failed: ${messageOf(cutError)})`;
    return error;
  }
}

/**
 * `mkdir -p`. Node reports a recursive mkdir refused by a read-only filesystem as ENOENT; the
 * plain mkdir of the last step says EROFS, which is what the operator needs to read in the log.
 */
async function ensureDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
    await mkdir(dir);
  }
}

export function fileNameFor(at: Date): string {
  return `dead-letter-${at.toISOString().slice(0, 10)}.jsonl`;
}

export function replayMarkerFileNameFor(at: Date): string {
  return `dead-letter-${at.toISOString().slice(0, 10)}.replays.jsonl`;
}

/** Makes a newly created file's directory entry durable too. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}
