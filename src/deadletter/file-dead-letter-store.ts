import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDeadLetterLine, serializeDeadLetterLine, type DeadLetterLine } from './dead-letter-line.js';
import type { DeadLetterRecord } from './dead-letter-record.js';
import type { CorruptLine, DeadLetterListing, DeadLetterStore } from './dead-letter-store.js';

const FILE_PATTERN = /^dead-letter-\d{4}-\d{2}-\d{2}\.jsonl$/;

/**
 * The dead-letter queue as append-only JSON-lines files under one directory, one file per UTC day
 * (`dead-letter-2026-11-21.jsonl`). Every append is flushed to disk (`datasync`) before it resolves;
 * appends from this process are serialised so lines never interleave. A replay is recorded as a
 * marker line, never by rewriting a record. A line torn by a crash mid-write is skipped and reported
 * by `list`, and terminated before the next append so it cannot swallow a new record.
 *
 * Several processes must not share one directory (appends are serialised per process only); use
 * the Elasticsearch store to share a queue.
 */
export class FileDeadLetterStore implements DeadLetterStore {
  private tail: Promise<void> = Promise.resolve();
  /** Files whose end this process has already checked for a torn last line. */
  private readonly checkedFiles = new Set<string>();

  constructor(private readonly dir: string) {}

  append(record: DeadLetterRecord): Promise<void> {
    const createdAt = new Date(record.createdAt);
    return this.enqueue({ type: 'record', record }, Number.isNaN(createdAt.getTime()) ? new Date() : createdAt);
  }

  async markReplayed(id: string, status: string, at: Date = new Date()): Promise<boolean> {
    if ((await this.get(id)) === null) return false;
    await this.enqueue({ type: 'replayed', id, replayedAt: at.toISOString(), replayStatus: status }, at);
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

  private enqueue(line: DeadLetterLine, at: Date): Promise<void> {
    const write = this.tail.then(() => this.write(line, at));
    // The next append waits for this one whether it succeeded or not.
    this.tail = write.catch(() => undefined);
    return write;
  }

  private async write(line: DeadLetterLine, at: Date): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = join(this.dir, fileNameFor(at));
    const handle = await open(file, 'a+');
    try {
      const { size } = await handle.stat();
      const prefix = (await this.endsTorn(handle, file, size)) ? '\n' : '';
      await handle.appendFile(prefix + serializeDeadLetterLine(line), 'utf8');
      await handle.datasync();
      if (size === 0) await syncDirectory(this.dir);
    } finally {
      await handle.close();
    }
  }

  /** Whether the file's last line lacks its newline (a torn write): checked once per file and process. */
  private async endsTorn(handle: Awaited<ReturnType<typeof open>>, file: string, size: number): Promise<boolean> {
    if (this.checkedFiles.has(file)) return false;
    this.checkedFiles.add(file);
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return last[0] !== 0x0a;
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

export function fileNameFor(at: Date): string {
  return `dead-letter-${at.toISOString().slice(0, 10)}.jsonl`;
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

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}
