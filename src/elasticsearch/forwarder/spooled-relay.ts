import type { ServerResponse } from 'node:http';
import { rawWithoutHopByHop } from '../hop-by-hop-headers.js';
import type { AnswerSink } from './answer-sink.js';
import { SpoolFile } from './spool-file.js';

export interface SpoolLimits {
  /**
   * Bytes of the answer held in memory while the client does not take them; beyond them the rest
   * goes to a temporary file, and as many again may be on their way to it (past that, Elasticsearch
   * waits for the file, at most `fileStallMs`).
   */
  readonly memoryBytes: number;
  /** The file takes nothing for this long while Elasticsearch waits for it: the client is given up. */
  readonly fileStallMs: number;
  /** The client takes no byte for this long while some wait for it: its connection is closed. */
  readonly clientIdleMs: number;
  /** Directory of the temporary files. */
  readonly dir: string;
}

export interface SpooledRelay {
  readonly sink: AnswerSink;
  /** Settles once Elasticsearch's answer is complete (null) or was cut (the error), at Elasticsearch's pace. */
  readonly over: Promise<Error | null>;
  /** Settles once the client's response is over: delivered whole, or its connection closed. */
  readonly delivered: Promise<void>;
}

/** Told why the proxy closed a client connection before its answer was delivered. */
export type GiveUp = (reason: string, error?: unknown) => void;

const FILE_READ_BYTES = 64 * 1024;

/**
 * Relays the answer to `res` as it comes, never holding Elasticsearch back for the client: what the
 * client has not taken waits in memory up to `memoryBytes`, then in a temporary file, and goes out
 * as the client reads. `over` settles when Elasticsearch is done, whatever the client does, so a
 * caller holding locks releases them then. Only the file may hold Elasticsearch back, while
 * `memoryBytes` wait to be written to it, and for at most `fileStallMs`. A client that takes
 * nothing for `clientIdleMs` while bytes wait for it, or whose bytes the file does not take, has
 * its connection closed, and the rest of the answer is dropped as it comes.
 */
export function spooledRelaySink(res: ServerResponse, limits: SpoolLimits, onGiveUp: GiveUp): SpooledRelay {
  const relay = new Relay(res, limits, onGiveUp);
  return { sink: relay, over: relay.over, delivered: relay.delivered };
}

class Relay implements AnswerSink {
  readonly over: Promise<Error | null>;
  readonly delivered: Promise<void>;
  private settle: (outcome: Error | null) => void = () => undefined;
  /** Waiting for the client, in memory, before anything went to the file. */
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  /** Waiting for the file to take them (counted until written). */
  private toFile: Buffer[] = [];
  private toFileBytes = 0;
  private file: SpoolFile | null = null;
  /** Once anything went to the file, everything after it does too: the answer keeps its order. */
  private spooling = false;
  private writingFile = false;
  private readingFile = false;
  private upstreamOver = false;
  private ended = false;
  private abandoned = false;
  private idle: NodeJS.Timeout | null = null;
  private resumeUpstream: () => void = () => undefined;
  /** Elasticsearch is held back until the file has taken what waits for it (timer: `fileStallMs`). */
  private fileStall: NodeJS.Timeout | null = null;

  constructor(
    private readonly res: ServerResponse,
    private readonly limits: SpoolLimits,
    private readonly onGiveUp: GiveUp,
  ) {
    this.over = new Promise((resolve) => (this.settle = resolve));
    this.delivered = new Promise((resolve) => {
      if (res.destroyed) resolve();
      else res.once('close', () => resolve());
    });
    res.once('close', () => this.onClose());
  }

  head(status: number, rawHeaders: string[], statusText: string, resume: () => void): void {
    const { res } = this;
    this.resumeUpstream = resume;
    if (res.destroyed) {
      this.abandon();
      return;
    }
    try {
      if (statusText) res.writeHead(status, statusText, rawWithoutHopByHop(rawHeaders));
      else res.writeHead(status, rawWithoutHopByHop(rawHeaders));
    } catch (error) {
      res.destroy(error instanceof Error ? error : new Error(String(error)));
      this.abandon();
      return;
    }
    res.on('drain', () => this.onDrain());
  }

  /** False only while the file has not taken `memoryBytes` given to it. */
  data(chunk: Buffer): boolean {
    if (this.abandoned) return true;
    if (!this.spooling && this.queuedBytes === 0 && !this.res.writableNeedDrain) {
      if (!this.res.write(chunk)) this.armIdle();
      return true;
    }
    if (!this.spooling && this.queuedBytes + chunk.length <= this.limits.memoryBytes) {
      this.queue.push(chunk);
      this.queuedBytes += chunk.length;
      return true;
    }
    this.spooling = true;
    this.toFile.push(chunk);
    this.toFileBytes += chunk.length;
    void this.writeFile();
    if (this.toFileBytes <= this.limits.memoryBytes) return true;
    this.fileStall ??= setTimeout(() => this.abandon(`the temporary file did not take the answer within ${this.limits.fileStallMs}ms`), this.limits.fileStallMs);
    return false;
  }

  /** Lets Elasticsearch send again once the file has caught up (or the client was given up). */
  private releaseUpstream(): void {
    if (this.fileStall === null) return;
    clearTimeout(this.fileStall);
    this.fileStall = null;
    this.resumeUpstream();
  }

  end(): void {
    this.upstreamOver = true;
    this.settle(null);
    this.pump();
  }

  cut(error: Error): void {
    this.upstreamOver = true;
    this.settle(error);
    this.res.destroy(error);
    this.abandon();
  }

  private onDrain(): void {
    this.idle?.refresh();
    this.pump();
  }

  /** Hands the client what waits, in order, while it takes it; ends the response once all is out. */
  private pump(): void {
    const { res } = this;
    if (this.abandoned || this.ended) return;
    while (this.queue.length > 0 && !res.writableNeedDrain) {
      const chunk = this.queue.shift() as Buffer;
      this.queuedBytes -= chunk.length;
      res.write(chunk);
    }
    if (res.writableNeedDrain) {
      this.armIdle();
      return;
    }
    if (this.file !== null && this.file.unread > 0) {
      void this.readFile();
      return;
    }
    if (this.writingFile || this.toFile.length > 0) return;
    this.disarmIdle();
    if (this.upstreamOver) this.finish();
  }

  private async writeFile(): Promise<void> {
    if (this.writingFile) return;
    this.writingFile = true;
    try {
      const file = (this.file ??= await SpoolFile.create(this.limits.dir));
      if (this.abandoned) await this.closeFile();
      while (this.toFile.length > 0 && !this.abandoned) {
        const bytes = this.toFile.length === 1 ? (this.toFile[0] as Buffer) : Buffer.concat(this.toFile);
        this.toFile = [];
        await file.append(bytes);
        this.toFileBytes -= bytes.length;
        if (this.toFileBytes <= this.limits.memoryBytes) this.releaseUpstream();
      }
    } catch (error) {
      this.abandon('the answer could not be kept in a temporary file', error);
    } finally {
      this.writingFile = false;
    }
    this.pump();
  }

  private async readFile(): Promise<void> {
    if (this.readingFile || this.file === null) return;
    this.readingFile = true;
    try {
      const bytes = await this.file.next(FILE_READ_BYTES);
      if (this.abandoned) return;
      this.res.write(bytes);
    } catch (error) {
      this.abandon('the answer could not be read back from its temporary file', error);
      return;
    } finally {
      this.readingFile = false;
    }
    this.pump();
  }

  /**
   * Everything was handed to the response. What Node still holds is under its high-water mark; a
   * client that does not take even that within the idle time is cut like any other.
   */
  private finish(): void {
    this.ended = true;
    void this.closeFile();
    this.res.end();
    if (!this.res.writableFinished) this.armIdle();
  }

  private armIdle(): void {
    if (this.idle !== null) return;
    this.idle = setTimeout(() => this.abandon(`the client took no byte of its answer for ${this.limits.clientIdleMs}ms`), this.limits.clientIdleMs);
  }

  private disarmIdle(): void {
    if (this.idle === null) return;
    clearTimeout(this.idle);
    this.idle = null;
  }

  private onClose(): void {
    this.disarmIdle();
    if (!this.res.writableFinished) this.abandon();
    else void this.closeFile();
  }

  /** Stops delivering: the client connection is closed, what waits is dropped, and so is the rest as it comes. */
  private abandon(reason?: string, error?: unknown): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.queue = [];
    this.queuedBytes = 0;
    this.toFile = [];
    this.toFileBytes = 0;
    this.disarmIdle();
    this.releaseUpstream();
    void this.closeFile();
    if (!this.res.destroyed) this.res.destroy();
    if (reason !== undefined) this.onGiveUp(reason, error);
  }

  private async closeFile(): Promise<void> {
    const { file } = this;
    this.file = null;
    await file?.close().catch(() => undefined);
  }
}
