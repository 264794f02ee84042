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
}

export interface HostPoolOptions {
  readonly downForMs?: number;
  readonly now?: () => number;
}

export class HostPool {
  readonly hosts: readonly UpstreamHost[];
  private readonly downUntil = new Map<UpstreamHost, number>();
  private readonly downForMs: number;
  private readonly now: () => number;
  private cursor = 0;

  constructor(urls: readonly URL[], options: HostPoolOptions = {}) {
    if (urls.length === 0) throw new Error('HostPool needs at least one Elasticsearch host');
    this.hosts = urls.map((url) => ({ url, label: url.origin }));
    this.downForMs = options.downForMs ?? HOST_DOWN_FOR_MS;
    this.now = options.now ?? Date.now;
  }

  /** Every host once: healthy ones in round-robin order, then the ones set aside. */
  attemptOrder(): UpstreamHost[] {
    const start = this.cursor;
    this.cursor = (this.cursor + 1) % this.hosts.length;
    const rotated = [...this.hosts.slice(start), ...this.hosts.slice(0, start)];
    // Read once per host: a timer running out between two reads would leave the host out entirely.
    const down = new Set(rotated.filter((host) => this.isDown(host)));
    return [...rotated.filter((host) => !down.has(host)), ...down];
  }

  markDown(host: UpstreamHost): void {
    this.downUntil.set(host, this.now() + this.downForMs);
  }

  markUp(host: UpstreamHost): void {
    this.downUntil.delete(host);
  }

  private isDown(host: UpstreamHost): boolean {
    const until = this.downUntil.get(host);
    return until !== undefined && until > this.now();
  }
}
