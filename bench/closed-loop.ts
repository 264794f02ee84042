import { Agent } from 'node:http';
import { exchangeStatus } from './http-exchange.js';
import { performance } from 'node:perf_hooks';
import { loadResult, type LoadResult } from './load.js';

/**
 * A closed-loop load generator for the write-hot comparison: `connections` workers, each sending
 * its next request when the previous one is answered, spread over several base URLs (one or two
 * proxies, or the stand-in). With `perDocumentMutex`, a worker first takes an in-process mutex of
 * the document it writes and holds it until the answer: the "perfect lock" reference — the same
 * serialization as the proxy gives, at no cost at all.
 */
export interface ClosedLoopSpec {
  readonly baseUrls: readonly string[];
  readonly connections: number;
  readonly durationS: number;
  readonly documents: number;
  readonly path: (document: number) => string;
  readonly body: string;
  readonly perDocumentMutex: boolean;
}

/** FIFO mutex per document, in the load generator's own process. */
class DocumentMutexes {
  private readonly waiters = new Map<number, (() => void)[]>();

  async lock(document: number): Promise<void> {
    const queue = this.waiters.get(document);
    if (queue === undefined) {
      this.waiters.set(document, []);
      return;
    }
    await new Promise<void>((resolve) => queue.push(resolve));
  }

  unlock(document: number): void {
    const queue = this.waiters.get(document);
    const next = queue?.shift();
    if (next !== undefined) next();
    else this.waiters.delete(document);
  }
}

export async function runClosedLoop(spec: ClosedLoopSpec): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  const mutexes = new DocumentMutexes();
  const latencies: number[] = [];
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + spec.durationS * 1000;
  const worker = async (w: number): Promise<void> => {
    const baseUrl = spec.baseUrls[w % spec.baseUrls.length]!;
    while (performance.now() < deadline) {
      const document = next++ % spec.documents;
      const sent = performance.now();
      if (spec.perDocumentMutex) await mutexes.lock(document);
      try {
        const status = await exchangeStatus(agent, new URL(spec.path(document), baseUrl), 'PUT', { 'content-type': 'application/json' }, spec.body);
        if (status >= 200 && status < 300) {
          ok++;
          latencies.push(performance.now() - sent);
        } else non2xx++;
      } catch {
        errors++;
      } finally {
        if (spec.perDocumentMutex) mutexes.unlock(document);
      }
    }
  };
  await Promise.all(Array.from({ length: spec.connections }, (_, w) => worker(w)));
  const durationS = (performance.now() - started) / 1000;
  agent.destroy();
  return loadResult(latencies, { ok, non2xx, errors }, durationS);
}
