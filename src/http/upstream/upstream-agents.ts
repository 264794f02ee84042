import { readFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { ElasticsearchSettings } from '../../config/settings.js';
import type { UpstreamHost } from './host-pool.js';

/** Keep-alive agents shared by every upstream host (an agent pools sockets per host:port). */
export interface UpstreamAgents {
  forHost(host: UpstreamHost): HttpAgent;
  destroy(): void;
}

export function createUpstreamAgents(settings: ElasticsearchSettings): UpstreamAgents {
  const http = new HttpAgent({ keepAlive: true, scheduling: 'lifo' });
  const https = new HttpsAgent({
    keepAlive: true,
    scheduling: 'lifo',
    rejectUnauthorized: settings.ssl.verify,
    ...(settings.ssl.caFile !== null ? { ca: readFileSync(settings.ssl.caFile) } : {}),
  });
  return {
    forHost: (host) => (host.https ? https : http),
    destroy: () => {
      http.destroy();
      https.destroy();
    },
  };
}
