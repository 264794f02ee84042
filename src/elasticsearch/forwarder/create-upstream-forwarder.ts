import { tmpdir } from 'node:os';
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import type { UpstreamForwarder } from '../upstream-forwarder.js';
import { DEFAULT_BODY_IDLE_TIMEOUT_MS } from '../../http/request-body.js';
import { HostPool } from './host-pool.js';
import { UndiciUpstreamForwarder } from './undici-upstream-forwarder.js';
import type { UpstreamFailures } from './upstream-failures.js';

export interface UpstreamForwarderOptions {
  readonly logger?: Logger;
  readonly failures?: UpstreamFailures;
  /** Longest time a client may take no byte of a spooled answer (default: the request body's idle time). */
  readonly clientIdleMs?: number;
}

/** The forwarder the proxy uses: undici pools (docs/performance.md says why). */
export function createUpstreamForwarder(settings: Settings, options: UpstreamForwarderOptions = {}): UpstreamForwarder {
  return new UndiciUpstreamForwarder({
    pool: new HostPool(settings.elasticsearch.hosts),
    timeoutMs: settings.proxy.upstreamTimeoutMs,
    tls: settings.elasticsearch.ssl,
    spool: {
      memoryBytes: settings.proxy.answerBufferBytes,
      fileStallMs: settings.proxy.upstreamTimeoutMs,
      clientIdleMs: options.clientIdleMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS,
      dir: tmpdir(),
    },
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
    ...(options.failures !== undefined ? { failures: options.failures } : {}),
  });
}
