import type { ServerResponse } from 'node:http';
import { ProxyError } from '../errors/proxy-error.js';
import type { ForwardOutcome, ForwardRequest, UpstreamForwarder, UpstreamResponse } from '../http/upstream-forwarder.js';
import type { ProxyMetrics } from './proxy-metrics.js';

/** Counts upstream failures by code, whichever path (pass-through, write, readiness) met them. */
export function instrumentForwarder(forwarder: UpstreamForwarder, metrics: ProxyMetrics): UpstreamForwarder {
  return {
    async pipe(request: ForwardRequest, res: ServerResponse): Promise<ForwardOutcome> {
      const outcome = await forwarder.pipe(request, res);
      if (outcome.error !== null) metrics.upstreamError(outcome.error.code);
      return outcome;
    },
    async exchange(request: ForwardRequest): Promise<UpstreamResponse> {
      try {
        return await forwarder.exchange(request);
      } catch (error) {
        if (error instanceof ProxyError) metrics.upstreamError(error.code);
        throw error;
      }
    },
    close: () => forwarder.close(),
  };
}
