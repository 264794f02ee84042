import type { Settings } from '../../config/settings.js';
import type { ReplayCredentials } from '../../deadletter/replay-credentials.js';
import { readReplayTls, ReplayTlsError, type ReplayTls } from '../../deadletter/replay-tls.js';
import { UsageError } from '../cli-context.js';

/** The `dlq replay` options as parseArgs gives them. */
export interface ReplayValues {
  readonly 'dry-run'?: boolean;
  readonly proxy?: string;
  readonly header?: string[];
  readonly 'authorize-anonymous'?: boolean;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}

/** Every replay option checked before the queue is opened or anything is sent. */
export function replayOptions(values: ReplayValues, settings: Settings): ReplayOptions {
  const proxyUrl = parseProxyUrl(values.proxy, settings);
  return {
    dryRun: values['dry-run'] === true,
    proxyUrl,
    tls: parseReplayTls(values, proxyUrl),
    extraHeaders: parseHeaders(values.header ?? []),
    authorizeAnonymous: values['authorize-anonymous'] === true,
  };
}

export interface ReplayOptions extends ReplayCredentials {
  readonly dryRun: boolean;
  readonly proxyUrl: URL;
  readonly tls: ReplayTls;
}

/** `--proxy`, or the proxy's own listen address as the settings give it, in the scheme it speaks. */
function parseProxyUrl(value: string | undefined, settings: Settings): URL {
  const text = value ?? defaultProxyUrl(settings);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`dlq replay: --proxy ${text}: expected a URL like https://127.0.0.1:9201`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`dlq replay: --proxy ${text}: expected an http:// or https:// URL like https://127.0.0.1:9201`);
  }
  return url;
}

function defaultProxyUrl(settings: Settings): string {
  const scheme = settings.proxy.listenTls === null ? 'http' : 'https';
  return `${scheme}://${urlHost(settings.proxy.listenHost)}:${settings.proxy.listenPort}`;
}

/** A listen host as a URL names it: loopback for "every address" (no certificate names 0.0.0.0), IPv6 in brackets. */
function urlHost(listenHost: string): string {
  if (listenHost === '0.0.0.0') return '127.0.0.1';
  if (listenHost === '::') return '[::1]';
  return listenHost.includes(':') ? `[${listenHost}]` : listenHost;
}

/** `--ca`, `--cert` and `--key`, read and checked; they only make sense for an https:// proxy. */
function parseReplayTls(values: Pick<ReplayValues, 'ca' | 'cert' | 'key'>, proxyUrl: URL): ReplayTls {
  const given = (['ca', 'cert', 'key'] as const).find((name) => values[name] !== undefined);
  if (proxyUrl.protocol !== 'https:' && given !== undefined) {
    throw new UsageError(`dlq replay: --${given} ${values[given]}: expected an https:// proxy URL (the proxy is ${proxyUrl.origin})`);
  }
  try {
    return readReplayTls({ caFile: values.ca ?? null, certFile: values.cert ?? null, keyFile: values.key ?? null });
  } catch (error) {
    if (error instanceof ReplayTlsError) throw new UsageError(`dlq replay: ${error.message}`);
    throw error;
  }
}

function parseHeaders(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const colon = value.indexOf(':');
    if (colon <= 0) throw new UsageError(`dlq replay: --header ${value}: expected "Name: value"`);
    headers[value.slice(0, colon).trim()] = value.slice(colon + 1).trim();
  }
  return headers;
}
