import { readFileSync } from 'node:fs';
import { Client, type ClientOptions } from '@elastic/elasticsearch';
import type { ElasticsearchSettings } from '../config/settings.js';

/**
 * The client for calls the proxy makes on its own behalf (alias resolution, readiness, the
 * dead-letter index). Only these calls carry `elasticsearch.auth.*`; client requests are
 * forwarded with their own credentials and nothing added.
 */
export function createClusterClient(settings: ElasticsearchSettings, requestTimeoutMs: number): Client {
  const options: ClientOptions = {
    nodes: settings.hosts.map((url) => url.toString()),
    requestTimeout: requestTimeoutMs,
    maxRetries: 1,
    compression: false,
  };
  if (settings.ssl.caFile !== null || !settings.ssl.verify) {
    options.tls = {
      ...(settings.ssl.caFile !== null ? { ca: readFileSync(settings.ssl.caFile) } : {}),
      rejectUnauthorized: settings.ssl.verify,
    };
  }
  if (settings.auth?.kind === 'basic') options.auth = { username: settings.auth.username, password: settings.auth.password };
  if (settings.auth?.kind === 'apiKey') options.auth = { apiKey: settings.auth.apiKey };
  return new Client(options);
}
