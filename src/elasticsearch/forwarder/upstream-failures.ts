import type { ErrorCode } from '../../errors/error-codes.js';

/** What a forwarder tells the observer seam: one call per failed exchange with Elasticsearch. */
export interface UpstreamFailures {
  upstreamFailed(code: ErrorCode): void;
}

export const NO_UPSTREAM_FAILURES: UpstreamFailures = { upstreamFailed: () => undefined };
