import { randomUUID } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Bytes appended in order and read back in order from a temporary file. The file is removed from
 * its directory as soon as it is opened: only the open handle keeps it, so nothing is left behind
 * whatever happens to the process, and its space is given back when the handle is closed.
 */
export class SpoolFile {
  private written = 0;
  private read = 0;

  private constructor(private readonly handle: FileHandle) {}

  static async create(dir: string): Promise<SpoolFile> {
    const path = join(dir, `es-lock-proxy-answer-${randomUUID()}`);
    const handle = await open(path, 'wx+', 0o600);
    try {
      await unlink(path);
    } catch (error) {
      await handle.close();
      throw error;
    }
    return new SpoolFile(handle);
  }

  /** Bytes appended and not read back yet. */
  get unread(): number {
    return this.written - this.read;
  }

  async append(bytes: Buffer): Promise<void> {
    for (let offset = 0; offset < bytes.length; ) {
      const { bytesWritten } = await this.handle.write(bytes, offset, bytes.length - offset, this.written);
      offset += bytesWritten;
      this.written += bytesWritten;
    }
  }

  /** The next unread bytes, at most `max` of them. */
  async next(max: number): Promise<Buffer> {
    const buffer = Buffer.allocUnsafe(Math.min(max, this.unread));
    const { bytesRead } = await this.handle.read(buffer, 0, buffer.length, this.read);
    this.read += bytesRead;
    return buffer.subarray(0, bytesRead);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}
