import type { ServerResponse } from 'node:http';
import { rawWithoutHopByHop } from '../hop-by-hop-headers.js';

/** Where an upstream answer goes once its head arrived: relayed to the client, or buffered. */
export interface AnswerSink {
  head(status: number, rawHeaders: string[], statusText: string, resume: () => void): void;
  /** False: the sink cannot take more now; it calls the head's `resume` when it can. */
  data(chunk: Buffer): boolean;
  end(): void;
  /** The exchange failed after the head: the answer was cut short. */
  cut(error: Error): void;
}

/**
 * Relays the answer to `res` as it comes (status, headers minus hop-by-hop ones, body); `over`
 * settles once the upstream answer is complete (null) or was cut (the error). A client that cannot
 * keep up pauses the upstream socket; a client that goes away does not cut the upstream exchange
 * short: the rest is drained, so that "over" keeps meaning "Elasticsearch is done with it".
 */
export function relaySink(res: ServerResponse): { readonly sink: AnswerSink; readonly over: Promise<Error | null> } {
  let settle: (outcome: Error | null) => void = () => undefined;
  const over = new Promise<Error | null>((resolve) => (settle = resolve));
  const sink: AnswerSink = {
    head: (status, rawHeaders, statusText, resume) => relayHead(res, status, rawHeaders, statusText, resume),
    data: (chunk) => res.destroyed || res.write(chunk),
    end: () => {
      if (!res.destroyed) res.end();
      settle(null);
    },
    cut: (error) => {
      res.destroy(error);
      settle(error);
    },
  };
  return { sink, over };
}

function relayHead(res: ServerResponse, status: number, rawHeaders: string[], statusText: string, resume: () => void): void {
  if (res.destroyed) return;
  try {
    if (statusText) res.writeHead(status, statusText, rawWithoutHopByHop(rawHeaders));
    else res.writeHead(status, rawWithoutHopByHop(rawHeaders));
  } catch (error) {
    res.destroy(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  res.on('drain', resume);
  res.once('close', resume);
}

export interface BufferedAnswer {
  readonly rawHeaders: string[];
  readonly body: Buffer;
}

/** Collects the answer; `over` settles with it, or with the error that cut it short. */
export function bufferSink(): { readonly sink: AnswerSink; readonly over: Promise<BufferedAnswer | Error> } {
  const chunks: Buffer[] = [];
  let rawHeaders: string[] = [];
  let settle: (outcome: BufferedAnswer | Error) => void = () => undefined;
  const over = new Promise<BufferedAnswer | Error>((resolve) => (settle = resolve));
  const sink: AnswerSink = {
    head: (_status, headers) => (rawHeaders = headers),
    data: (chunk) => chunks.push(chunk) > 0,
    end: () => settle({ rawHeaders, body: chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks) }),
    cut: (error) => settle(error),
  };
  return { sink, over };
}
