/**
 * The Elasticsearch nodes requests are spread over: round-robin, with a node that refused a
 * connection set aside for a short while so the next requests do not pay for it again. A
 * node set aside is still tried last, so a cluster whose nodes all look down is re-probed on
 * every request rather than declared dead until the timer runs out.
 */
export const HOST_DOWN_FOR_MS = 5_000;

export interface UpstreamHost {
  readonly url: URL;
  /** `protocol//host:port`, for logs and `ForwardOutcome.upstreamHost`. */
  readonly label: string;
  /** Derived once, not per request: what a request to this node needs. */
  readonly https: boolean;
  /** Host name without IPv6 brackets, as sockets want it. */
  readonly hostname: string;
  readonly port: number | undefined;
  /** `Host` header value. */
  readonly hostHeader: string;
  /** A node behind a reverse proxy may live under a path (`http://gw/es`); requests go beneath it. */
  readonly pathPrefix: string;
}

export interface HostPoolOptions {
  readonly downForMs?: number;
  readonly now?: () => number;
}

export function upstreamHostOf(url: URL): UpstreamHost {
  return {
    url,
    label: url.origin,
    https: url.protocol === 'https:',
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    hostHeader: url.host,
    pathPrefix: url.pathname.replace(/\/+$/, ''),
  };
}

export class HostPool {
  readonly hosts: readonly UpstreamHost[];
  private readonly downUntil = new Map<UpstreamHost, number>();
  private readonly downForMs: number;
  private readonly now: () => number;
  private cursor = 0;

  constructor(urls: readonly URL[], options: HostPoolOptions = {}) {
    if (urls.length === 0) throw new Error('HostPool needs at least one Elasticsearch host');
    this.hosts = urls.map(upstreamHostOf);
    this.downForMs = options.downForMs ?? HOST_DOWN_FOR_MS;
    this.now = options.now ?? Date.now;
  }

  /** Every host once: healthy ones in round-robin order, then the ones set aside. */
  attemptOrder(): readonly UpstreamHost[] {
    // One node and none set aside (the common case): no array per request.
    if (this.hosts.length === 1 && this.downUntil.size === 0) return this.hosts;
    const start = this.cursor;
    this.cursor = (this.cursor + 1) % this.hosts.length;
    const rotated = [...this.hosts.slice(start), ...this.hosts.slice(0, start)];
    if (this.downUntil.size === 0) return rotated;
    // Read once per host: a timer running out between two reads would leave the host out entirely.
    const down = new Set(rotated.filter((host) => this.isDown(host)));
    return [...rotated.filter((host) => !down.has(host)), ...down];
  }

  markDown(host: UpstreamHost): void {
    this.downUntil.set(host, this.now() + this.downForMs);
  }

  markUp(host: UpstreamHost): void {
    if (this.downUntil.size > 0) this.downUntil.delete(host);
  }

  private isDown(host: UpstreamHost): boolean {
    const until = this.downUntil.get(host);
    return until !== undefined && until > this.now();
  }
}
