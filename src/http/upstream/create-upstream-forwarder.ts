import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import type { UpstreamForwarder } from '../upstream-forwarder.js';
import { HostPool } from './host-pool.js';
import { NodeUpstreamForwarder } from './node-upstream-forwarder.js';
import { createUpstreamAgents } from './upstream-agents.js';
import type { UpstreamFailures } from './upstream-failures.js';

export interface UpstreamForwarderOptions {
  readonly logger?: Logger;
  readonly failures?: UpstreamFailures;
}

/** The forwarder the proxy uses: node:http keep-alive agents (README "Stack" says why). */
export function createUpstreamForwarder(settings: Settings, options: UpstreamForwarderOptions = {}): UpstreamForwarder {
  return new NodeUpstreamForwarder({
    pool: new HostPool(settings.elasticsearch.hosts),
    agents: createUpstreamAgents(settings.elasticsearch),
    timeoutMs: settings.proxy.upstreamTimeoutMs,
    ...options,
  });
}
