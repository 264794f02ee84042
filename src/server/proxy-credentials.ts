import type { ElasticsearchSettings } from '../config/settings.js';

/** `Authorization` for the proxy's own calls (readiness); never added to client requests. */
export function proxyCredentials(auth: ElasticsearchSettings['auth']): string | null {
  if (auth === null) return null;
  if (auth.kind === 'apiKey') return `ApiKey ${auth.apiKey}`;
  return `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
}
