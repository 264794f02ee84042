import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import type { ElasticsearchSettings } from '../../config/settings.js';
import type { UpstreamHost } from './host-pool.js';

/** Upper bound on establishing a connection; a host that needs longer is treated as unreachable. */
const CONNECT_TIMEOUT_MS = 10_000;

export interface UpstreamPoolOptions {
  /**
   * No response head within this time after the request was handed to a connection, or no body
   * byte within this time of the previous one once the head came → the exchange is ended (504).
   */
  readonly timeoutMs: number;
  readonly tls?: Pick<ElasticsearchSettings['ssl'], 'verify' | 'caFile'>;
}

/**
 * One keep-alive undici `Pool` per Elasticsearch node. One request per connection at a time
 * (`pipelining: 1`): a request is never queued behind another one's answer, and never re-sent.
 * undici's own timers bound every wait on the node: `headersTimeout` runs from the moment the
 * request is handed to a connection (sending a held body included) to the answer's head;
 * `bodyTimeout` is the longest silence between two body chunks, so a long answer (a scroll, a
 * large search) streams as long as it flows, and one that stalls is ended. undici does not count
 * the time it is paused because the client is not taking the answer.
 */
export function createUpstreamPools(hosts: readonly UpstreamHost[], options: UpstreamPoolOptions): Map<UpstreamHost, Pool> {
  const timeout = Math.min(CONNECT_TIMEOUT_MS, options.timeoutMs);
  const ca = options.tls?.caFile ? readFileSync(options.tls.caFile) : undefined;
  const tls = { rejectUnauthorized: options.tls?.verify ?? true, ...(ca === undefined ? {} : { ca }) };
  const pools = new Map<UpstreamHost, Pool>();
  for (const host of hosts) {
    const connect = host.https ? { timeout, ...tls } : { timeout };
    pools.set(host, new Pool(host.url.origin, { pipelining: 1, connect, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs }));
  }
  return pools;
}
