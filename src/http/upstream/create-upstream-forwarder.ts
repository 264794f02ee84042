import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import type { UpstreamForwarder } from '../../forwarding/upstream-forwarder.js';
import { HostPool } from './host-pool.js';
import { UndiciUpstreamForwarder } from './undici-upstream-forwarder.js';
import type { UpstreamFailures } from './upstream-failures.js';

export interface UpstreamForwarderOptions {
  readonly logger?: Logger;
  readonly failures?: UpstreamFailures;
}

/** The forwarder the proxy uses: undici pools (docs/performance.md says why). */
export function createUpstreamForwarder(settings: Settings, options: UpstreamForwarderOptions = {}): UpstreamForwarder {
  return new UndiciUpstreamForwarder({
    pool: new HostPool(settings.elasticsearch.hosts),
    timeoutMs: settings.proxy.upstreamTimeoutMs,
    tls: settings.elasticsearch.ssl,
    ...options,
  });
}
